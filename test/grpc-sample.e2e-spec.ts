import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Sample 03-grpc end to end as a user runs it (built by `npm test`): a Nest gRPC client calling a real
 * gRPC service that fails half its calls, with and without the retry budget. Short run: 300 calls
 * per policy in 1 s.
 */

const run = promisify(execFile);
const sample = fileURLToPath(new URL('../dist-sample/sample/03-grpc/main.js', import.meta.url));

interface Row {
  policy: string;
  calls: number;
  attempts: number;
  attemptsPerCall: number;
  retriesPerCall: number;
  succeeded: number;
}

describe('sample 03-grpc (--json)', () => {
  let rows: Row[];

  beforeAll(async () => {
    if (!existsSync(sample)) throw new Error(`${sample} is missing: run \`npm run build\` first`);
    const { stdout } = await run(
      process.execPath,
      [sample, '--rate', '300', '--seconds', '1', '--json'],
      { timeout: 30_000, killSignal: 'SIGKILL' },
    );
    ({ rows } = JSON.parse(stdout.trimEnd().split('\n').at(-1)!) as { rows: Row[] });
  }, 35_000);

  it('makes every call, at most 3 attempts each, under both policies', () => {
    expect(rows.map((row) => [row.policy, row.calls])).toEqual([
      ['inventoryNoBudget', 300],
      ['inventory', 300],
    ]);
    for (const row of rows) {
      expect(row.attempts).toBeGreaterThanOrEqual(row.calls);
      expect(row.attempts).toBeLessThanOrEqual(3 * row.calls);
    }
  });

  // One second is the adaptive budget's warm-up: it funds retries as the static bucket does until it
  // has seen 20 of them, so here it still cuts them (about 3x); over a longer run against independent
  // failures it lets working retries through (docs/retry-budget.md).
  it('without the budget a half-failing service gets about 1.75 attempts per call; in its first second the budget cuts the retries', () => {
    const [without, withBudget] = rows as [Row, Row];
    expect(without.attemptsPerCall).toBeGreaterThan(1.5);
    expect(without.retriesPerCall).toBeGreaterThan(2 * withBudget.retriesPerCall);
    expect(withBudget.attemptsPerCall).toBeLessThan(1.3);
  });
});
