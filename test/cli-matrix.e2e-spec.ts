import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `nresilience simulate --matrix`, run from the built dist as a user would. */
const root = process.cwd();
const main = join(root, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'nresilience-matrix-'));
const config = join(dir, 'resilience.json');
writeFileSync(
  config,
  JSON.stringify({
    policies: {
      api: { preset: 'http' },
      plain: { attempts: 3 },
      budgeted: { attempts: 3, budget: { fraction: 0.1, minimumPerSecond: 3 } },
      unbudgeted: { attempts: 3, budget: false },
      bulkhead: { preset: 'http', limit: { concurrency: 2 } },
    },
  }),
);

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, 'simulate', '--config', config, ...args],
      { cwd: root, encoding: 'utf8' },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        });
      },
    );
  });
}

describe('nresilience simulate --matrix', () => {
  it('prints the policy beside breaker off, budget off and the SRE throttle, with progress on stderr', async () => {
    const result = await cli(
      '--policy',
      'api',
      '--matrix',
      '--scenarios',
      'cold-start-dead',
      '--seeds',
      '1',
    );
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('Scenario matrix — policy api: 500 calls/s, seeds 1');
    expect(lines.slice(4).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([
      ['cold-start-dead', 'api'],
      ['cold-start-dead', 'breaker off'],
      ['cold-start-dead', 'budget off'],
      ['cold-start-dead', 'SRE throttle'],
    ]);
    expect(result.stderr).toContain('matrix 4/4: cold-start-dead · adaptiveThrottle · seed 1');
  });

  it('shows what the budget costs and saves: the same policy with budget off, columns with their units', async () => {
    // The policy's own budget (the default, 0.1 per success and a 3/s floor written out), 20 calls/s, seed 1.
    const result = await cli(
      '--policy',
      'budgeted',
      '--matrix',
      '--scenarios',
      'failing-50,outage-30s',
      '--seeds',
      '1',
      '--rate',
      '20',
    );
    expect(result.code).toBe(0);
    const rows = result.stdout
      .trim()
      .split('\n')
      .slice(2)
      .map((l) => l.trim().split(/\s{2,}/));
    expect(rows[0]).toEqual([
      'scenario',
      'variant',
      'availability (min)',
      'load ×',
      'worst s ×',
      'attempts in fault',
      'opens (max)',
      'first open after (attempts)',
      'recovered after (s)',
      'limited',
    ]);
    expect(rows.slice(2)).toEqual([
      // Independent failures: the budget costs 4.5 points of availability for 5 % less load.
      [
        'failing-50',
        'budgeted',
        '82.08% (82.08%)',
        '1.692',
        '2.45',
        '4062',
        '0.0 (0)',
        '-',
        '-',
        '-',
      ],
      [
        'failing-50',
        'budget off',
        '86.58% (86.58%)',
        '1.787',
        '2.45',
        '4288',
        '0.0 (0)',
        '-',
        '-',
        '-',
      ],
      [
        'failing-50',
        'SRE throttle',
        '76.71% (76.71%)',
        '1.590',
        '2.45',
        '3816',
        '0.0 (0)',
        '-',
        '-',
        '-',
      ],
      // An outage: the budget keeps the dead dependency's load at 1.05× instead of 1.5× for nothing.
      [
        'outage-30s',
        'budgeted',
        '75.00% (75.00%)',
        '1.050',
        '2.50',
        '687',
        '0.0 (0)',
        '-',
        '0',
        '-',
      ],
      [
        'outage-30s',
        'budget off',
        '75.08% (75.08%)',
        '1.515',
        '3.20',
        '1797',
        '0.0 (0)',
        '-',
        '0',
        '-',
      ],
      [
        'outage-30s',
        'SRE throttle',
        '74.75% (74.75%)',
        '1.049',
        '2.50',
        '686',
        '0.0 (0)',
        '-',
        '5',
        '-',
      ],
    ]);
  });

  it('a policy with a limit: "limit off" beside it, --compare limit=off as its own row, the limited column', async () => {
    const result = await cli(
      '--policy',
      'bulkhead',
      '--matrix',
      '--scenarios',
      'healthy',
      '--seeds',
      '1',
      '--rate',
      '100',
      '--compare',
      'limit=off',
    );
    expect(result.code).toBe(0);
    const rows = result.stdout
      .trim()
      .split('\n')
      .slice(4)
      .map((l) => l.trim().split(/\s{2,}/));
    // A bulkhead of 2 at 100 calls/s of ~25 ms calls refuses about half of them (Erlang loss ≈ 47 %).
    expect(rows.map((r) => [r[1], r[2], r.at(-1)])).toEqual([
      ['bulkhead', '51.23% (51.23%)', '48.77%'],
      ['breaker off', '51.23% (51.23%)', '48.77%'],
      ['limit off', '100.00% (100.00%)', '-'],
      ['budget off', '51.23% (51.23%)', '48.77%'],
      ['SRE throttle', '51.23% (51.23%)', '48.77%'],
      ['bulkhead (limit=off)', '100.00% (100.00%)', '-'],
    ]);
    expect(result.stderr).toContain('matrix 1/1: healthy · bulkhead (limit=off) · seed 1');
  });

  it('prints JSON with --json, and leaves out "breaker off" and "budget off" for a policy without them', async () => {
    const result = await cli(
      '--policy',
      'unbudgeted',
      '--matrix',
      '--json',
      '--scenarios',
      'cold-start-dead',
      '--seeds',
      '4',
      '--rate',
      '50',
    );
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as {
      policy: string;
      rate: number;
      seeds: number[];
      rows: {
        scenario: string;
        variant: string;
        cells: { seed: number; breakerOpens: number }[];
      }[];
    };
    expect([json.policy, json.rate, json.seeds]).toEqual(['unbudgeted', 50, [4]]);
    expect(
      json.rows.map((r) => [r.scenario, r.variant, r.cells.map((c) => [c.seed, c.breakerOpens])]),
    ).toEqual([
      ['cold-start-dead', 'policy', [[4, 0]]],
      ['cold-start-dead', 'adaptiveThrottle', [[4, 0]]],
    ]);
  });

  it('exits 2 naming a bad --seeds or --scenarios value', async () => {
    const seeds = await cli('--policy', 'api', '--matrix', '--seeds', '1,x');
    expect(seeds.code).toBe(2);
    expect(seeds.stderr).toContain(
      '--seeds: "1,x" is invalid: must be a comma-separated list of seeds, each an integer in [0, 4294967295], e.g. 1,2,3\n',
    );
    const scenarios = await cli('--policy', 'api', '--matrix', '--scenarios', 'healthy,typo');
    expect(scenarios.code).toBe(2);
    expect(scenarios.stderr).toContain(
      '--scenarios: "typo" is invalid: must be among healthy, failing-1',
    );
  });

  it("--hops 3: the chain matrix, naive retry loops beside the policy at every hop, --rate the frontend's", async () => {
    const result = await cli(
      '--policy',
      'plain',
      '--matrix',
      '--hops',
      '3',
      '--scenarios',
      'database-down',
      '--rate',
      '40',
      '--json',
    );
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as {
      hops: number;
      rate: number;
      rows: {
        variant: string;
        cells: { requestsPerCall: number[]; bottomAmplification: number }[];
      }[];
    };
    expect([json.hops, json.rate]).toEqual([3, 40]);
    expect(json.rows[0]).toMatchObject({
      variant: 'naive',
      cells: [{ requestsPerCall: [1, 3, 9, 27] }],
    });
    expect(json.rows[1]!.variant).toBe('policy');
    expect(json.rows[1]!.cells[0]!.bottomAmplification).toBeLessThan(2);
    expect(result.stderr).toContain('chain matrix 2/2: database-down · policy · seed 1');
  });

  it('exits 2 for --hops out of range, without --matrix, or with a scenario the chain matrix does not have', async () => {
    const range = await cli('--policy', 'plain', '--matrix', '--hops', '9');
    expect(range.code).toBe(2);
    expect(range.stderr).toContain(
      '--hops: "9" is invalid: must be an integer in [1, 8] (services in the chain)',
    );
    const alone = await cli('--policy', 'plain', '--hops', '3');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(
      '--hops: "3" is invalid: only goes with --matrix (the chain matrix)',
    );
    const scenario = await cli(
      '--policy',
      'plain',
      '--matrix',
      '--hops',
      '2',
      '--scenarios',
      'brownout',
    );
    expect(scenario.code).toBe(2);
    expect(scenario.stderr).toContain(
      '--scenarios: "brownout" is invalid: must be among healthy, failing-10, failing-50, database-down, outage-10s',
    );
  });
});
