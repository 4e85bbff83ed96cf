import { type Policy, PolicyConfigError, RetryBudget } from '../../core/index.js';
import { checkValue, given, integerRule } from '../../core/internal.js';
import { SEED_RULE } from '../seeded-random.js';
import type { NestedRetryMode } from './chain.js';
import { chainOf } from './chain.js';
import { Dependency } from './dependency.js';
import { Load } from './load.js';
import { SIMULATED_RATE_RULE } from './matrix.js';

/** Calls per second the chain matrix offers its frontend unless told otherwise. */
export const CHAIN_MATRIX_RATE = 100;

/** One scenario of the chain matrix: what the database at the bottom of the chain does. */
export interface ChainScenario {
  /** Short name (`database-down`). */
  readonly name: string;
  /** What happens, in a few words. */
  readonly description: string;
  /** Simulated ms of arrivals. */
  readonly duration: number;
  /** The database model at `rate` frontend calls/s (its workers scale with the rate). */
  dependency(rate: number): Dependency;
}

const database = (rate: number): Dependency =>
  // 20 workers per 100 calls/s at p50 20 ms: about 10× the healthy load, so a storm is not also an overload.
  Dependency.healthy({
    p50: 20,
    p99: 200,
    capacity: { concurrency: Math.max(1, Math.round(rate / 5)), timeout: 1000 },
  });

/** The chain matrix's scenarios, in table order. */
export const CHAIN_SCENARIOS: readonly ChainScenario[] = Object.freeze([
  { name: 'healthy', description: 'nothing wrong', duration: 20_000, dependency: database },
  {
    name: 'failing-10',
    description: '10 % of database requests fail, independently',
    duration: 20_000,
    dependency: (rate: number) => database(rate).failing(0.1),
  },
  {
    name: 'failing-50',
    description: 'half the database requests fail, independently',
    duration: 20_000,
    dependency: (rate: number) => database(rate).failing(0.5),
  },
  {
    name: 'database-down',
    description: 'every database request fails, the whole run',
    duration: 20_000,
    dependency: (rate: number) => database(rate).failing(1),
  },
  {
    name: 'outage-10s',
    description: 'every database request fails from 0:10 for 10 s',
    duration: 30_000,
    dependency: (rate: number) => database(rate).outage({ after: 10_000, lasting: 10_000 }),
  },
]);

/**
 * The rows each chain scenario is run for: `naive`, every hop a plain retry loop of the policy's
 * attempts and backoff (no retry budget, no breaker: what a team writes by hand); `policy`, every hop
 * the policy as given.
 */
export type ChainVariant = 'naive' | 'policy';

/** Options of {@link ChainMatrix.run}. */
export interface ChainMatrixOptions {
  /** Services in the chain, an integer in [1, 8]. Default 3. */
  readonly hops?: number;
  /** Seeds, each an integer in [0, 2^32 - 1], at least one. Default `[1]`. */
  readonly seeds?: readonly number[];
  /** Frontend calls per second, in (0, 100 000]. Default {@link CHAIN_MATRIX_RATE}. */
  readonly rate?: number;
  /** Scenario names to run (default all of {@link CHAIN_SCENARIOS}). */
  readonly scenarios?: readonly string[];
  /** What hops do with marked requests (see `NestedRetryMode`). Default `'report'`. */
  readonly nested?: NestedRetryMode;
  /** Told after each run finishes. */
  readonly onProgress?: (
    done: number,
    total: number,
    scenario: string,
    variant: ChainVariant,
    seed: number,
  ) => void;
}

/** One scenario × variant × seed of the chain matrix. Ratios 0..1 or per frontend call. */
export interface ChainMatrixCell {
  readonly seed: number;
  /** Frontend calls that succeeded / calls. */
  readonly availability: number;
  /** Database requests per frontend call. */
  readonly bottomAmplification: number;
  /** Requests each hop and the database received per frontend call, frontend first. */
  readonly requestsPerCall: readonly number[];
  /** The highest per-second ratio of database requests to frontend calls. */
  readonly worstSecond: number;
  /** Frontend p99 latency, ms. */
  readonly p99: number;
}

/** One scenario × variant over every seed. */
export interface ChainMatrixRow {
  readonly scenario: string;
  readonly variant: ChainVariant;
  readonly cells: readonly ChainMatrixCell[];
}

/** `hops`: services in a chain. @internal */
export const HOPS_RULE = integerRule(1, 8, 'services in the chain');

/** The chain scenario called `name`. @throws PolicyConfigError (field `scenario`) naming the known ones. */
export function chainScenario(name: string): ChainScenario {
  const found = CHAIN_SCENARIOS.find((s) => s.name === name);
  if (found === undefined)
    throw new PolicyConfigError(
      'scenario',
      name,
      `must be one of ${CHAIN_SCENARIOS.map((s) => s.name).join(', ')}`,
    );
  return found;
}

/** The naive row's hop: the same attempts and backoff, no budget, no breaker. */
export function naiveHop(policy: Policy): Policy {
  return policy.with({ budget: RetryBudget.none, breaker: undefined });
}

/**
 * The scenario matrix for a chain of services (DESIGN §8.1): each scenario of {@link CHAIN_SCENARIOS}
 * for `hops` services that each run `policy` (each hop its own instance: its own budget and breaker)
 * beside the naive chain, in the simulator (`Simulate.chain`; deterministic).
 *
 * ```ts
 * const matrix = await ChainMatrix.run(Resilience.default, { hops: 3, scenarios: ['database-down'] });
 * matrix.cell('database-down', 'naive', 1).bottomAmplification; // 27
 * ```
 */
export const ChainMatrix = {
  /**
   * Runs the chain matrix.
   * @throws PolicyConfigError naming `hops`, `seeds`, `rate`, `scenario` or `nested` for a bad option,
   *   or what `Simulate.chain` throws for a policy it cannot simulate.
   */
  async run(policy: Policy, options: ChainMatrixOptions = {}): Promise<ChainMatrixReport> {
    const hops = checkValue(HOPS_RULE, 'hops', given(options.hops, 3));
    const seeds = given(options.seeds, [1]);
    if (!Array.isArray(seeds) || seeds.length === 0)
      throw new PolicyConfigError('seeds', seeds, 'must be a non-empty array of seeds');
    seeds.forEach((seed, index) => checkValue(SEED_RULE, `seeds[${index}]`, seed));
    const rate = checkValue(SIMULATED_RATE_RULE, 'rate', given(options.rate, CHAIN_MATRIX_RATE));
    const scenarios =
      options.scenarios === undefined ? CHAIN_SCENARIOS : options.scenarios.map(chainScenario);
    const variants: readonly ChainVariant[] = ['naive', 'policy'];
    const rows: ChainMatrixRow[] = [];
    const total = scenarios.length * variants.length * seeds.length;
    let done = 0;
    for (const scenario of scenarios) {
      for (const variant of variants) {
        const hop = variant === 'naive' ? naiveHop(policy) : policy;
        const cells: ChainMatrixCell[] = [];
        for (const seed of seeds) {
          const report = await chainOf(Array.from({ length: hops }, () => hop))
            .against(scenario.dependency(rate))
            .under(Load.constant({ perSecond: rate }))
            .for(scenario.duration)
            .run(seed, { nested: options.nested });
          cells.push(
            Object.freeze({
              seed,
              availability: report.availability,
              bottomAmplification: report.bottomAmplification,
              requestsPerCall: report.requestsPerCall,
              worstSecond: report.worstSecond,
              p99: report.latency(0.99),
            }),
          );
          options.onProgress?.(++done, total, scenario.name, variant, seed);
        }
        rows.push(Object.freeze({ scenario: scenario.name, variant, cells: Object.freeze(cells) }));
      }
    }
    return new ChainMatrixReport(policy.name, hops, rate, seeds, rows);
  },
} as const;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The result of {@link ChainMatrix.run}: one row per scenario × variant, one cell per seed. */
export class ChainMatrixReport {
  /** @internal built by {@link ChainMatrix.run}. */
  constructor(
    /** The policy's name (`''` when unnamed). */
    readonly policy: string,
    /** Services in the chain. */
    readonly hops: number,
    /** Frontend calls per second. */
    readonly rate: number,
    /** The seeds every row ran. */
    readonly seeds: readonly number[],
    /** Rows in matrix order (scenario, then variant). */
    readonly rows: readonly ChainMatrixRow[],
  ) {}

  /** The cell for `scenario` × `variant` × `seed`. @throws RangeError when the matrix did not run it. */
  cell(scenario: string, variant: ChainVariant, seed: number): ChainMatrixCell {
    const found = this.rows
      .find((r) => r.scenario === scenario && r.variant === variant)
      ?.cells.find((c) => c.seed === seed);
    if (found === undefined)
      throw new RangeError(`the chain matrix has no cell ${scenario} × ${variant} × seed ${seed}`);
    return found;
  }

  /** Every figure, ratios rounded to 4 decimals. */
  toJSON(): {
    policy: string;
    hops: number;
    rate: number;
    seeds: number[];
    rows: ChainMatrixRow[];
  } {
    const r4 = (x: number): number => Math.round(x * 10_000) / 10_000;
    return {
      policy: this.policy,
      hops: this.hops,
      rate: this.rate,
      seeds: [...this.seeds],
      rows: this.rows.map((row) => ({
        ...row,
        cells: row.cells.map((c) => ({
          ...c,
          availability: r4(c.availability),
          bottomAmplification: r4(c.bottomAmplification),
          requestsPerCall: c.requestsPerCall.map(r4),
          worstSecond: r4(c.worstSecond),
          p99: r4(c.p99),
        })),
      })),
    };
  }

  /** The table: per row the means over seeds of availability, database requests per call (and per hop), worst second and p99. */
  toString(): string {
    const header = [
      'scenario',
      'variant',
      'frontend availability',
      'database req/call',
      'per hop',
      'worst s',
      'p99',
    ];
    const rows = this.rows.map(({ scenario, variant, cells }) => [
      scenario,
      variant === 'naive' ? 'naive' : this.policy || 'policy',
      `${(mean(cells.map((c) => c.availability)) * 100).toFixed(1)}%`,
      mean(cells.map((c) => c.bottomAmplification)).toFixed(2),
      cells[0]!.requestsPerCall
        .map((_, k) => mean(cells.map((c) => c.requestsPerCall[k]!)).toFixed(2))
        .join(' → '),
      mean(cells.map((c) => c.worstSecond)).toFixed(2),
      `${Math.round(mean(cells.map((c) => c.p99)))} ms`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]): string =>
      cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    const title = `Chain matrix — ${this.hops} hops${this.policy ? ` of policy ${this.policy}` : ''} vs naive retries: ${this.rate} calls/s, seeds ${this.seeds.join(', ')}`;
    return [
      title,
      '',
      line(header),
      line(widths.map((w) => '-'.repeat(w))),
      ...rows.map(line),
    ].join('\n');
  }
}
