/** What the CLI touches outside itself, injectable for tests. */
export interface CliIo {
  /** Standard output (the report table or JSON). */
  readonly stdout: (text: string) => void;
  /** Standard error (progress and error messages). */
  readonly stderr: (text: string) => void;
  /** Reads a UTF-8 file; throws a Node `ENOENT`-style error when it cannot. */
  readonly readFile: (path: string) => string;
  /** Writes a UTF-8 file. */
  readonly writeFile: (path: string, text: string) => void;
}
