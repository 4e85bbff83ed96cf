/**
 * Measures the two ways a concurrency limit can hold its slots (docs/limits.md, "Per attempt or per
 * call"): per attempt — the library's — and per call (`limitPerCall`: from the call's first admission
 * to its end, through backoff and retries), beside the same policy without a limit, in the scenario
 * matrix at 500 calls/s, seeds 1–3. Policies: `Resilience.http` and `Resilience.default`, each with
 * `Limit.adaptive()` and with `Limit.concurrency(n)`, n the scenario dependency's workers (its capacity
 * × its mean service time: the limit a team sizing it to the dependency would write).
 *
 * Run on demand (minutes of CPU): `npm run build && node dist-sample/scripts/slot-hold.js [out.json]`.
 * Prints one markdown table per policy; writes every cell as JSON when given a path.
 */
import { writeFileSync } from 'node:fs';
import { Limit, type Policy, Resilience } from '@nresilience/nestjs/core';
import {
  MATRIX_SCENARIOS,
  type MatrixCell,
  type MatrixVariant,
  ScenarioMatrix,
} from '@nresilience/nestjs/testing';

const RATE = 500;
const SEEDS = [1, 2, 3];
/** failing-10 runs 10 simulated minutes in the matrix; two are enough to compare the holds. */
const SCENARIOS: readonly { name: string; maximumDuration?: number }[] = [
  { name: 'healthy' },
  { name: 'overload' },
  { name: 'overload-3x' },
  { name: 'queue-latency' },
  { name: 'failing-10', maximumDuration: 120_000 },
  { name: 'failing-50' },
  { name: 'brownout' },
];
const HOLDS: readonly MatrixVariant[] = ['policy', 'limitPerCall', 'limitOff'];
const BASES: readonly { label: string; policy: Policy }[] = [
  { label: 'Resilience.http', policy: Resilience.http },
  { label: 'Resilience.default', policy: Resilience.default },
];

interface Row {
  base: string;
  limit: string;
  scenario: string;
  hold: MatrixVariant;
  capacity: number | undefined;
  cells: readonly MatrixCell[];
}

/** The scenario dependency's workers at {@link RATE}: its capacity × its mean service time. */
function workers(scenario: string): number {
  const dependency = MATRIX_SCENARIOS.find((s) => s.name === scenario)!.dependency(RATE);
  return dependency.capacity.concurrency;
}

const rows: Row[] = [];
const started = Date.now();
for (const base of BASES) {
  for (const { name, maximumDuration } of SCENARIOS) {
    const scenario = MATRIX_SCENARIOS.find((s) => s.name === name)!;
    const n = workers(name);
    for (const [limit, value, holds] of [
      ['adaptive', Limit.adaptive(), HOLDS],
      [`concurrency(${n})`, Limit.concurrency(n), HOLDS.slice(0, 2)],
    ] as const) {
      const report = await ScenarioMatrix.run(base.policy.with({ name: 'slots', limit: value }), {
        seeds: SEEDS,
        rate: RATE,
        scenarios: [name],
        variants: holds,
        ...(maximumDuration === undefined ? {} : { maximumDuration }),
      });
      for (const row of report.rows)
        rows.push({
          base: base.label,
          limit: row.variant === 'limitOff' ? 'none' : limit,
          scenario: name,
          hold: row.variant,
          capacity: scenario.capacity?.(RATE),
          cells: row.cells,
        });
      process.stderr.write(
        `${base.label} ${name} ${limit}: ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
      );
    }
  }
}

const mean = (cells: readonly MatrixCell[], read: (c: MatrixCell) => number) =>
  cells.reduce((sum, c) => sum + read(c), 0) / cells.length;
const range = (cells: readonly MatrixCell[], read: (c: MatrixCell) => number, digits: number) => {
  const values = cells.map(read);
  const low = Math.min(...values).toFixed(digits);
  const high = Math.max(...values).toFixed(digits);
  return low === high ? low : `${low}–${high}`;
};
const HOLD_LABEL: Partial<Record<MatrixVariant, string>> = {
  policy: 'per attempt',
  limitPerCall: 'per call',
  limitOff: 'no limit',
};

for (const base of BASES) {
  console.log(`\n${base.label}, 500 calls/s, seeds 1–3 (ranges over seeds)\n`);
  console.log(
    '| scenario | limit | hold | availability % | goodput calls/s (capacity) | admitted p99 ms | refused % | attempts per call |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows.filter((r) => r.base === base.label)) {
    const cap = row.capacity === undefined ? '' : ` (${row.capacity.toFixed(0)})`;
    console.log(
      `| ${row.scenario} | ${row.limit} | ${HOLD_LABEL[row.hold]} | ${range(row.cells, (c) => c.availability * 100, 2)} | ${mean(row.cells, (c) => c.goodput).toFixed(0)}${cap} | ${range(row.cells, (c) => c.admittedP99, 0)} | ${range(row.cells, (c) => (c.limited ?? 0) * 100, 2)} | ${range(row.cells, (c) => c.loadMultiplier, 3)} |`,
    );
  }
}
const out = process.argv[2];
if (out !== undefined) writeFileSync(out, JSON.stringify(rows, null, 2));
