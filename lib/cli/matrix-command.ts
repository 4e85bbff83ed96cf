import type { Policy } from '../core/index.js';
import {
  MATRIX_SCENARIOS,
  MATRIX_SEEDS,
  MatrixReport,
  type MatrixRow,
  ScenarioMatrix,
  type MatrixVariant,
} from '../testing/index.js';
import { SEED_RULE } from '../testing/seeded-random.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage-error.js';

/** What `nresilience simulate --matrix` was asked for. */
export interface MatrixCommandOptions {
  /** `--seeds a,b,c` as written, or `undefined` for the matrix's own seeds. */
  readonly seeds: string | undefined;
  /** `--scenarios a,b` as written, or `undefined` for every scenario. */
  readonly scenarios: string | undefined;
  /** Calls per second. */
  readonly rate: number;
  /** Print JSON instead of the table. */
  readonly json: boolean;
}

/** Reads `--seeds 1,2,3`. @throws UsageError naming `--seeds`. */
export function parseSeeds(text: string | undefined): readonly number[] {
  if (text === undefined) return MATRIX_SEEDS;
  const parts = text.split(',').map((p) => p.trim());
  const seeds = parts.map(Number);
  if (parts.some((p, i) => !/^\d+$/.test(p) || !SEED_RULE.accepts(seeds[i]))) {
    throw new UsageError(
      '--seeds',
      text,
      `must be a comma-separated list of seeds, each ${SEED_RULE.rule.replace(/^must be /, '')}, e.g. 1,2,3`,
    );
  }
  return seeds;
}

/** Reads `--scenarios outage-30s,brownout`. @throws UsageError naming `--scenarios` and the known names. */
export function parseScenarios(text: string | undefined): readonly string[] | undefined {
  if (text === undefined) return undefined;
  const names = text.split(',').map((p) => p.trim());
  const known = MATRIX_SCENARIOS.map((s) => s.name);
  const unknown = names.find((n) => !known.includes(n));
  if (unknown !== undefined)
    throw new UsageError('--scenarios', unknown, `must be among ${known.join(', ')}`);
  return names;
}

/**
 * The rows `simulate --matrix` runs for `policy`: the policy, then the same policy with its breaker
 * off (when it has one), with its limit off (when it has one) and with its retry budget off (when it
 * has one), then the SRE throttle.
 */
export function commandVariants(policy: Policy): MatrixVariant[] {
  const variants: MatrixVariant[] = ['policy'];
  if (policy.options.breaker !== undefined) variants.push('breakerOff');
  if (policy.options.limit !== undefined) variants.push('limitOff');
  if (policy.options.budget.kind !== 'none') variants.push('budgetOff');
  variants.push('adaptiveThrottle');
  return variants;
}

/** A policy `--compare` made from the user's, and the label of its rows. */
export interface ComparedPolicy {
  readonly label: string;
  readonly policy: Policy;
}

/**
 * `nresilience simulate --matrix`: the scenario matrix (DESIGN §8.1) for the user's policy beside the
 * same policy with its breaker off, its limit off and its budget off (each when it has one), so a
 * user sees what each costs and saves in their own config, the SRE adaptive-throttle reference, and
 * one row per `--compare` variant (`limit=off`, `budget=none`, …) under each scenario.
 * Progress goes to stderr, the table (or `--json`) to stdout.
 * @param compared the `--compare` variants, each run as its own policy row
 * @returns the exit code (0)
 * @throws UsageError for a bad `--seeds` or `--scenarios`
 */
export async function matrixCommand(
  policy: Policy,
  options: MatrixCommandOptions,
  io: CliIo,
  compared: readonly ComparedPolicy[] = [],
): Promise<number> {
  const seeds = parseSeeds(options.seeds);
  const scenarios = parseScenarios(options.scenarios);
  // A compared policy's runs are named by its label; its count restarts.
  const progress =
    (label?: string) =>
    (done: number, total: number, scenario: string, variant: MatrixVariant, seed: number) =>
      io.stderr(`matrix ${done}/${total}: ${scenario} · ${label ?? variant} · seed ${seed}\n`);
  const report = await ScenarioMatrix.run(policy, {
    seeds,
    scenarios,
    rate: options.rate,
    variants: commandVariants(policy),
    onProgress: progress(),
  });
  const others: MatrixRow[] = [];
  for (const { label, policy: other } of compared) {
    const rows = await ScenarioMatrix.run(other, {
      seeds,
      scenarios,
      rate: options.rate,
      variants: ['policy'],
      onProgress: progress(label),
    });
    for (const row of rows.rows) others.push({ ...row, label });
  }
  // Each scenario's rows together: the policy's variants, then the compared policies.
  const rows = report.rows.flatMap((row, i) =>
    report.rows[i + 1]?.scenario === row.scenario
      ? [row]
      : [row, ...others.filter((o) => o.scenario === row.scenario)],
  );
  const merged = new MatrixReport(report.policy, report.rate, report.seeds, rows);
  io.stdout(options.json ? `${JSON.stringify(merged, null, 2)}\n` : `${merged.toString()}\n`);
  return 0;
}
