import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { USAGE } from '../sample/01-storm-demo/usage.js';

// `npm run demo -- --help` and a mistyped option: the built demo answers at once, before any run.

const run = promisify(execFile);
const demo = fileURLToPath(new URL('../dist-sample/sample/01-storm-demo/main.js', import.meta.url));

async function demoWith(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [demo, ...args], {
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('storm demo options', () => {
  it('--help prints the options and the exit codes, runs nothing and exits 0', async () => {
    const result = await demoWith('--help');
    expect(result).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: '' });
    expect(USAGE).toContain('5  the machine was too slow');
  }, 25_000);

  it('an unknown option names it and prints the usage, without a stack trace, exit 1', async () => {
    const { code, stdout, stderr } = await demoWith('--quik');
    expect([code, stdout]).toEqual([1, '']);
    // Node's own sentence (later versions add a hint after it), then the usage.
    expect(stderr.startsWith("storm demo: Unknown option '--quik'")).toBe(true);
    expect(stderr.endsWith(`\n\n${USAGE}\n`)).toBe(true);
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 25_000);
});
