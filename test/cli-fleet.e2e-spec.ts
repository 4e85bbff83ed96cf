import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `nresilience simulate --fleet`, run from the built dist as a user would. */
const main = join(process.cwd(), 'dist/cli/main.js');

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, 'simulate', ...args],
      { encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        }),
    );
  });
}

describe('nresilience simulate --fleet', () => {
  it('prints the fleet matrix without a config: one row per scenario, progress on stderr', async () => {
    const result = await cli('--fleet', '--duration', '5s', '--seeds', '1');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toContain('Fleet matrix — 10 processes, 800 calls/s offered unevenly');
    expect(lines[0]).toContain('5 s, seeds 1');
    expect(lines.slice(4).map((l) => l.split(/\s+/)[0])).toEqual([
      'shared',
      'per-process',
      'no-limit',
      'store-outage',
      'strict-provider',
    ]);
    expect(result.stderr).toContain('fleet matrix 5/5: strict-provider · seed 1');
    // 5 s ends before the store returns (at 20 s): the row says so instead of "never".
    const outage = lines.find((l) => l.startsWith('store-outage'))!;
    expect(outage).not.toContain('never');
    expect(outage.match(/after the run/g)).toHaveLength(2);
  }, 60_000);

  it('prints JSON with --json', async () => {
    const result = await cli('--fleet', '--duration', '2s', '--seeds', '3', '--json');
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { seeds: number[]; rows: { scenario: string }[] };
    expect(json.seeds).toEqual([3]);
    expect(json.rows).toHaveLength(5);
  }, 60_000);

  it('exits 2 for --fleet with --matrix, or with --config but no --policy', async () => {
    const both = await cli('--fleet', '--matrix');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--fleet');
    const half = await cli('--fleet', '--config', 'resilience.yaml');
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--policy');
  }, 60_000);

  it.each([
    ['--seed', '7'],
    ['--scenario', 'outage-30s'],
    ['--scenarios', 'healthy'],
    ['--rate', '100'],
    ['--dependency', 'p50=10ms'],
    ['--svg', 'fleet.svg'],
    ['--compare', 'budget=off'],
  ])(
    'exits 2 for --fleet with %s, which it would ignore, naming the option',
    async (flag, value) => {
      const result = await cli('--fleet', flag, value);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `${flag}: "${value}" is invalid: does not go with --fleet (its rows, rates and provider are fixed; use --seeds and --duration)`,
      );
    },
    60_000,
  );

  it('exits 2 for a policy with its own limit: each row sets the limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-limit-'));
    const file = join(dir, 'resilience.yaml');
    writeFileSync(file, 'policies:\n  capped: { preset: http, limit: { concurrency: 4 } }\n');
    const result = await cli('--fleet', '--config', file, '--policy', 'capped', '--seeds', '1');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'limit: "a concurrency limit" is invalid: must be unset in a policy run by the fleet matrix: each row sets the processes\' own rate limit (shared, per process, none)',
    );
  }, 60_000);
});
