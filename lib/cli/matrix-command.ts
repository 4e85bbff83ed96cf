import type { Policy } from '../core/index.js';
import {
  MATRIX_SCENARIOS,
  MATRIX_SEEDS,
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
 * off (when it has one) and with its retry budget off (when it has one), then the SRE throttle.
 */
export function commandVariants(policy: Policy): MatrixVariant[] {
  const variants: MatrixVariant[] = ['policy'];
  if (policy.options.breaker !== undefined) variants.push('breakerOff');
  if (policy.options.budget.kind !== 'none') variants.push('budgetOff');
  variants.push('adaptiveThrottle');
  return variants;
}

/**
 * `nresilience simulate --matrix`: the scenario matrix (DESIGN §8.1) for the user's policy beside the
 * same policy with its breaker off and with its budget off (each when it has one), so a user sees
 * what each costs and saves in their own config, and the SRE adaptive-throttle reference.
 * Progress goes to stderr, the table (or `--json`) to stdout.
 * @returns the exit code (0)
 * @throws UsageError for a bad `--seeds` or `--scenarios`
 */
export async function matrixCommand(
  policy: Policy,
  options: MatrixCommandOptions,
  io: CliIo,
): Promise<number> {
  const seeds = parseSeeds(options.seeds);
  const scenarios = parseScenarios(options.scenarios);
  const variants = commandVariants(policy);
  const report = await ScenarioMatrix.run(policy, {
    seeds,
    scenarios,
    rate: options.rate,
    variants,
    onProgress: (done, total, scenario, variant, seed) =>
      io.stderr(`matrix ${done}/${total}: ${scenario} · ${variant} · seed ${seed}\n`),
  });
  io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${report.toString()}\n`);
  return 0;
}
