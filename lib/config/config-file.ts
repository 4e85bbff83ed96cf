import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { YAMLParseError, parse as parseYaml } from 'yaml';

/** Why a config file could not be used. */
export type ConfigFileProblem = 'unreadable' | 'empty' | 'unparsable' | 'invalid' | 'unwatchable';

/**
 * A config file could not be read, parsed, validated or watched. The message starts with the file's
 * path and says what went wrong; for `invalid` the cause is the validator's own error (for the
 * resilience config a `ResilienceConfigError` listing every problem by its full path), for
 * `unparsable` the parser's (line and column included).
 *
 * ```text
 * resilience.yaml: unparsable YAML: Map keys must be unique at line 4, column 5: ...
 * resilience.yaml: invalid config: Invalid resilience config (1 problem):
 *   - policies.payments.attempts: 0 is invalid: must be an integer >= 1 (total attempts, including the first)
 * ```
 */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';

  /**
   * @param path the config file's path as given
   * @param problem what went wrong
   * @param detail the human-readable part after `path: `
   * @param options `cause`: the underlying error (fs, parser or validator)
   */
  constructor(
    readonly path: string,
    readonly problem: ConfigFileProblem,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${path}: ${detail}`, options);
  }
}

/** The format a config file is read in: `.json` as JSON, everything else (`.yaml`, `.yml`) as YAML. */
export function configFileFormat(path: string): 'json' | 'yaml' {
  return extname(path).toLowerCase() === '.json' ? 'json' : 'yaml';
}

/**
 * Parses the text of a config file in the format its name gives ({@link configFileFormat}), with
 * the `yaml` package (YAML 1.2 core schema: duplicate keys are an error, dates stay strings) or
 * `JSON.parse`.
 * @param text the file's content
 * @param path the file's path (for the format and the error)
 * @returns the parsed document (not yet validated)
 * @throws ConfigFileError `empty` when the text is blank (only whitespace or YAML comments),
 *   `unparsable` with the parser's message (line and column) otherwise.
 */
export function parseConfigText(text: string, path: string): unknown {
  const format = configFileFormat(path);
  let document: unknown;
  try {
    document = format === 'json' ? (text.trim() === '' ? null : JSON.parse(text)) : parseYaml(text);
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof YAMLParseError) {
      throw new ConfigFileError(
        path,
        'unparsable',
        `unparsable ${format === 'json' ? 'JSON' : 'YAML'}: ${error.message.trim()}`,
        { cause: error },
      );
    }
    throw error;
  }
  // A blank YAML document parses to null: treat it as "no content yet", never as a config.
  if (document === null || document === undefined)
    throw new ConfigFileError(path, 'empty', 'the file is empty', {});
  return document;
}

/**
 * Reads and parses a config file synchronously (start-up, where the app must not start without it).
 * Symlinks are followed.
 * @param path the file's path
 * @throws ConfigFileError `unreadable` (missing, a directory, no permission), `empty` or `unparsable`.
 */
export function readConfigFile(path: string): unknown {
  return parseConfigText(readConfigText(path), path);
}

/** The text of `path`, or a ConfigFileError `unreadable` naming the fs error. */
export function readConfigText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw unreadable(path, error);
  }
}

/** The `unreadable` error for an fs failure reading `path`. */
export function unreadable(path: string, error: unknown): ConfigFileError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new ConfigFileError(path, 'unreadable', `cannot be read (${code ?? String(error)})`, {
    cause: error,
  });
}
