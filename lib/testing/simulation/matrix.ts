import {
  AttemptCeiling,
  type CallEvent,
  Hedge,
  type Policy,
  PolicyConfigError,
  RetryBudget,
} from '../../core/index.js';
import { checkValue, given, numberRule, POSITIVE_SPAN_RULE } from '../../core/internal.js';
import { SEED_RULE } from '../seeded-random.js';
import { AdaptiveThrottle } from './adaptive-throttle.js';
import { AwsRetry } from './aws-retry.js';
import type { FaultWindow } from './dependency.js';
import { Load } from './load.js';
import {
  MATRIX_RATE,
  MATRIX_SCENARIOS,
  matrixScenario,
  type MatrixScenario,
} from './matrix-scenarios.js';
import type { SimulationReport } from './report.js';
import { Simulate } from './simulate.js';

/**
 * The rows each scenario is run for:
 * - `policy`: the policy as given;
 * - `breakerOff`: the same policy without its breaker;
 * - `limitOff`: the same policy without its concurrency or rate limit;
 * - `limitPerCall`: the same policy with its concurrency limit's slots held per call (from the call's
 *   first admission to its end, through backoff and retries) instead of per attempt — the other
 *   hold docs/limits.md measures;
 * - `adaptiveThrottle`: the same policy without its breaker, behind Google SRE's client-side
 *   adaptive throttle (K = 2, two minutes; {@link AdaptiveThrottle}) — the breaker's reference;
 * - `hedged`: the same policy with `hedge: Hedge.at(0.95)` (its own hedge kept when it has one) and
 *   every call repeatable;
 * - `ceilingOff`: the same policy without an attempt ceiling; `ceilingOn`: with
 *   `AttemptCeiling.default` (its own kept when it has one) — the measured ceiling's rows.
 *
 * The retry-budget references ({@link BUDGET_REFERENCES}) keep everything of the policy but its budget:
 * - `budgetOff`: `RetryBudget.none`;
 * - `tokenBucket10`: the static token bucket, 0.1 token per success (3/s floor), `RetryBudget.tokenBucket({ fraction: 0.1 })`;
 * - `tokenBucket20`: the same at 0.2 per success (Finagle's and Envoy's 20 %);
 * - `awsStandard`: no budget, the AWS SDKs' standard retry quota deciding retries ({@link AwsRetry});
 * - `awsAdaptive`: no budget, the AWS SDKs' adaptive mode (quota and client send-rate limiter).
 */
export type MatrixVariant =
  | 'policy'
  | 'breakerOff'
  | 'limitOff'
  | 'limitPerCall'
  | 'adaptiveThrottle'
  | 'hedged'
  | 'ceilingOff'
  | 'ceilingOn'
  | 'budgetOff'
  | 'tokenBucket10'
  | 'tokenBucket20'
  | 'awsStandard'
  | 'awsAdaptive';

/** The retry-budget references, in table order (run them with `variants: ['policy', ...BUDGET_REFERENCES]`). */
export const BUDGET_REFERENCES: readonly MatrixVariant[] = Object.freeze([
  'budgetOff',
  'tokenBucket10',
  'tokenBucket20',
  'awsStandard',
  'awsAdaptive',
]);

/** Every variant, in table order. */
export const MATRIX_VARIANTS: readonly MatrixVariant[] = Object.freeze([
  'policy',
  'breakerOff',
  'limitOff',
  'limitPerCall',
  'adaptiveThrottle',
  'hedged',
  'ceilingOff',
  'ceilingOn',
  ...BUDGET_REFERENCES,
]);

/** The variants a run has unless told otherwise (`hedged`, the ceiling rows and the budget references are asked for by name). */
const DEFAULT_VARIANTS: readonly MatrixVariant[] = Object.freeze([
  'policy',
  'breakerOff',
  'adaptiveThrottle',
]);

/** What each variant's row is labelled in the table (`policy` is labelled with the policy's name). */
const VARIANT_LABELS: Readonly<Record<MatrixVariant, string>> = {
  policy: 'policy',
  breakerOff: 'breaker off',
  limitOff: 'limit off',
  limitPerCall: 'slot per call',
  adaptiveThrottle: 'SRE throttle',
  hedged: 'hedged',
  ceilingOff: 'ceiling off',
  ceilingOn: 'ceiling on',
  budgetOff: 'budget off',
  tokenBucket10: 'static 10 %',
  tokenBucket20: 'static 20 %',
  awsStandard: 'AWS standard',
  awsAdaptive: 'AWS adaptive',
};

/** Seeds the matrix runs unless told otherwise. */
export const MATRIX_SEEDS: readonly number[] = Object.freeze([1, 2, 3]);

/** Options of {@link ScenarioMatrix.run}. */
export interface MatrixOptions {
  /** Seeds, each an integer in [0, 2^32 - 1], at least one. Default `[1, 2, 3]`. */
  readonly seeds?: readonly number[];
  /** Calls per second, in (0, 100 000]. Default 500. */
  readonly rate?: number;
  /** Scenario names to run (default all of {@link MATRIX_SCENARIOS}), in matrix order. */
  readonly scenarios?: readonly string[];
  /**
   * Caps every scenario's run at this many simulated ms (> 0), its fault windows clipped to it; for
   * quick gates over the long steady scenarios. Default: each scenario's own duration.
   */
  readonly maximumDuration?: number;
  /** Variants to run, in this order (default `policy`, `breakerOff`, `adaptiveThrottle`). */
  readonly variants?: readonly MatrixVariant[];
  /** Told after each run (scenario × variant × seed) finishes, with how many are done of how many. */
  readonly onProgress?: (
    done: number,
    total: number,
    scenario: string,
    variant: MatrixVariant,
    seed: number,
  ) => void;
}

/** What one run (scenario × variant × seed) measured. Ratios 0..1, durations ms. */
export interface MatrixCell {
  readonly seed: number;
  /** Calls that succeeded / calls. */
  readonly availability: number;
  /** Attempts that reached the dependency / calls, over the run. */
  readonly loadMultiplier: number;
  /** The same ratio in the worst second. */
  readonly worstSecond: number;
  /** Attempts that reached the dependency inside the scenario's fault windows (`null` without one). */
  readonly faultAttempts: number | null;
  /** Breaker opens. */
  readonly breakerOpens: number;
  /** Call latency at the 99th percentile, ms (every settled call, as callers waited). */
  readonly p99: number;
  /**
   * The same of the calls that made at least one attempt, ms: what the callers a limit let through
   * waited (a call refused before its first attempt is left out).
   */
  readonly admittedP99: number;
  /** Calls that ended refused as `limited` (by the policy's limit, or a reference throttle in front of it) / calls; `null` when the policy has no limit. */
  readonly limited: number | null;
  /** Calls that succeeded per simulated second of arrivals. */
  readonly goodput: number;
  /** Hedges started (`hedged` events) / calls. */
  readonly hedgedShare: number;
  /** Attempts that had settled (and been recorded) when the breaker first opened; `null` if it never opened. */
  readonly attemptsBeforeFirstOpen: number | null;
  /**
   * Ms from the end of the last fault window until per-second availability is back to ≥ 99 % of the
   * pre-fault level (see `SimulationReport.timeToRecover`); `'never'` when it did not come back within
   * the run; `null` when the scenario has no fault window that ends before the run does.
   */
  readonly timeToRecover: number | 'never' | null;
}

/** One scenario × variant over every seed. */
export interface MatrixRow {
  readonly scenario: string;
  readonly variant: MatrixVariant;
  readonly cells: readonly MatrixCell[];
  /** What the table calls the row instead of the variant's name (a compared policy, `--compare`). */
  readonly label?: string;
}

/** Requests sent in the seconds covered by `windows` (whole seconds from each window's start). */
function attemptsIn(report: SimulationReport, windows: readonly FaultWindow[]): number {
  let total = 0;
  for (const w of windows) {
    for (let s = Math.floor(w.start / 1000); s * 1000 < w.end && s < report.perSecond.length; s++)
      total += report.perSecond[s]!.dependencyRequests;
  }
  return total;
}

function variantPolicy(policy: Policy, variant: MatrixVariant): Policy {
  switch (variant) {
    case 'policy':
      return policy;
    case 'hedged':
      return policy.with({ hedge: policy.options.hedge ?? Hedge.at(0.95), repeatable: true });
    case 'ceilingOff':
      return policy.with({ attemptCeiling: undefined });
    case 'ceilingOn':
      return policy.with({
        attemptCeiling: policy.options.attemptCeiling ?? AttemptCeiling.default,
      });
    case 'breakerOff':
    case 'adaptiveThrottle':
      return policy.with({ breaker: undefined });
    case 'limitOff':
      return policy.with({ limit: undefined });
    case 'limitPerCall':
      if (policy.options.limit === undefined)
        throw new PolicyConfigError(
          'variants',
          variant,
          'needs a policy with a concurrency limit (Limit.concurrency or Limit.adaptive)',
        );
      return policy.with({ limit: policy.options.limit.heldPerCall() });
    case 'tokenBucket10':
      return policy.with({ budget: RetryBudget.tokenBucket({ fraction: 0.1 }) });
    case 'tokenBucket20':
      return policy.with({ budget: RetryBudget.tokenBucket({ fraction: 0.2 }) });
    default:
      return policy.with({ budget: RetryBudget.none });
  }
}

/** The reference in front of the dependency for `variant`, if it has one. */
function variantGate(variant: MatrixVariant): AdaptiveThrottle | AwsRetry | undefined {
  if (variant === 'adaptiveThrottle') return AdaptiveThrottle.sre();
  if (variant === 'awsStandard') return AwsRetry.standard;
  if (variant === 'awsAdaptive') return AwsRetry.adaptive;
  return undefined;
}

/** `scenario` run for at most `maximum` ms, its fault windows clipped to the shorter run. */
function capped(scenario: MatrixScenario, maximum: number): MatrixScenario {
  if (scenario.duration <= maximum) return scenario;
  const faults = scenario.faults
    .filter((f) => f.start < maximum)
    .map((f) => ({ start: f.start, end: Math.min(f.end, maximum) }));
  return { ...scenario, duration: maximum, faults, dependency: scenario.dependency };
}

async function runCell(
  policy: Policy,
  scenario: MatrixScenario,
  variant: MatrixVariant,
  rate: number,
  seed: number,
): Promise<MatrixCell> {
  let attempts = 0;
  let hedges = 0;
  let beforeOpen: number | null = null;
  const counting = (event: CallEvent): void => {
    if (event.kind === 'attempt') {
      if (event.verdict !== 'Limited') attempts++;
    } else if (event.kind === 'hedged') hedges++;
    else if (event.kind === 'breakerOpened' && beforeOpen === null) beforeOpen = attempts;
  };
  const run = variantPolicy(policy, variant);
  let builder = Simulate.policy(run.withListener(counting))
    .against(scenario.dependency(rate))
    .under(Load.constant({ perSecond: rate }))
    .for(scenario.duration);
  const gate = variantGate(variant);
  if (gate !== undefined) builder = builder.throttledBy(gate);
  const report = await builder.run(seed);
  const ends =
    scenario.faults.length > 0 &&
    scenario.faults[scenario.faults.length - 1]!.end < scenario.duration;
  return Object.freeze({
    seed,
    availability: report.availability,
    loadMultiplier: report.loadMultiplier,
    worstSecond: report.amplification,
    faultAttempts: scenario.faults.length === 0 ? null : attemptsIn(report, scenario.faults),
    breakerOpens: report.breakerOpens,
    p99: report.latency(0.99),
    admittedP99: report.admittedLatency(0.99),
    limited:
      run.options.limit === undefined
        ? null
        : report.calls === 0
          ? 0
          : (report.reasons.limited ?? 0) / report.calls,
    goodput: (report.availability * report.calls * 1000) / scenario.duration,
    hedgedShare: report.calls === 0 ? 0 : hedges / report.calls,
    attemptsBeforeFirstOpen: beforeOpen,
    timeToRecover: ends ? (report.timeToRecover ?? 'never') : null,
  });
}

/**
 * The rate of a matrix run or a CLI simulation, calls per second: at most 100 000 (a library bound:
 * a simulated second then already settles 100 000 calls, minutes of real time per simulated minute).
 * @internal
 */
export const SIMULATED_RATE_RULE = numberRule(
  'must be a number of calls per second in (0, 100000]',
  (v) => v > 0 && v <= 100_000,
);

function checkOptions(options: MatrixOptions): {
  seeds: readonly number[];
  rate: number;
  scenarios: readonly MatrixScenario[];
  variants: readonly MatrixVariant[];
} {
  const maximum = checkValue(
    POSITIVE_SPAN_RULE,
    'maximumDuration',
    given(options.maximumDuration, Infinity),
  );
  const seeds = given(options.seeds, MATRIX_SEEDS);
  if (!Array.isArray(seeds) || seeds.length === 0)
    throw new PolicyConfigError('seeds', seeds, 'must be a non-empty array of seeds');
  seeds.forEach((seed, index) => checkValue(SEED_RULE, `seeds[${index}]`, seed));
  const rate = checkValue(SIMULATED_RATE_RULE, 'rate', given(options.rate, MATRIX_RATE));
  const scenarios = (
    options.scenarios === undefined ? MATRIX_SCENARIOS : options.scenarios.map(matrixScenario)
  ).map((s) => capped(s, maximum));
  const variants = options.variants ?? DEFAULT_VARIANTS;
  for (const v of variants) {
    if (!MATRIX_VARIANTS.includes(v))
      throw new PolicyConfigError('variants', v, `must be among ${MATRIX_VARIANTS.join(', ')}`);
  }
  return { seeds, rate, scenarios, variants };
}

/**
 * The scenario matrix (DESIGN §8.1): every scenario of {@link MATRIX_SCENARIOS} for a policy, the
 * same policy with its breaker off and the adaptive-throttle reference (and, when asked, the
 * retry-budget references of {@link BUDGET_REFERENCES}), over several seeds, in the simulator
 * (deterministic: the same options give the same report).
 *
 * ```ts
 * const matrix = await ScenarioMatrix.run(Resilience.http, { scenarios: ['outage-30s'], seeds: [1] });
 * matrix.cell('outage-30s', 'policy', 1).faultAttempts; // attempts the dead dependency received
 * console.log(matrix.toString());
 * ```
 */
export const ScenarioMatrix = {
  /**
   * Runs the matrix for `policy`.
   * @throws PolicyConfigError naming `seeds`, `rate`, `scenario`, `maximumDuration` or `variants` for a bad option, or
   *   what `Simulate` throws for a policy it cannot simulate (a pinned budget or breaker).
   */
  async run(policy: Policy, options: MatrixOptions = {}): Promise<MatrixReport> {
    const { seeds, rate, scenarios, variants } = checkOptions(options);
    const rows: MatrixRow[] = [];
    const total = scenarios.length * variants.length * seeds.length;
    let done = 0;
    for (const scenario of scenarios) {
      for (const variant of variants) {
        const cells: MatrixCell[] = [];
        for (const seed of seeds) {
          cells.push(await runCell(policy, scenario, variant, rate, seed));
          options.onProgress?.(++done, total, scenario.name, variant, seed);
        }
        rows.push(Object.freeze({ scenario: scenario.name, variant, cells: Object.freeze(cells) }));
      }
    }
    return new MatrixReport(policy.name, rate, seeds, rows);
  },
} as const;

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The result of {@link ScenarioMatrix.run}: one row per scenario × variant, one cell per seed. */
export class MatrixReport {
  /** @internal built by {@link ScenarioMatrix.run}. */
  constructor(
    /** The policy's name (`''` when unnamed). */
    readonly policy: string,
    /** Calls per second offered. */
    readonly rate: number,
    /** The seeds every row ran. */
    readonly seeds: readonly number[],
    /** Rows in matrix order (scenario, then variant). */
    readonly rows: readonly MatrixRow[],
  ) {}

  /** The row for `scenario` × `variant`. @throws RangeError when the matrix did not run it. */
  row(scenario: string, variant: MatrixVariant): MatrixRow {
    const found = this.rows.find((r) => r.scenario === scenario && r.variant === variant);
    if (found === undefined) throw new RangeError(`the matrix has no row ${scenario} × ${variant}`);
    return found;
  }

  /** The cell for `scenario` × `variant` × `seed`. @throws RangeError when the matrix did not run it. */
  cell(scenario: string, variant: MatrixVariant, seed: number): MatrixCell {
    const found = this.row(scenario, variant).cells.find((c) => c.seed === seed);
    if (found === undefined)
      throw new RangeError(`the matrix has no cell ${scenario} × ${variant} × seed ${seed}`);
    return found;
  }

  /** Every figure, ratios rounded to 4 decimals: stable for the same options. */
  toJSON(): { policy: string; rate: number; seeds: number[]; rows: MatrixRow[] } {
    const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
    return {
      policy: this.policy,
      rate: this.rate,
      seeds: [...this.seeds],
      rows: this.rows.map((row) => ({
        scenario: row.scenario,
        variant: row.variant,
        ...(row.label === undefined ? {} : { label: row.label }),
        cells: row.cells.map((c) => ({
          ...c,
          limited: c.limited === null ? null : r4(c.limited),
          goodput: Math.round(c.goodput * 10) / 10,
          availability: r4(c.availability),
          loadMultiplier: r4(c.loadMultiplier),
          worstSecond: r4(c.worstSecond),
        })),
      })),
    };
  }

  /**
   * The table: per row, availability as the mean over seeds (lowest seed in brackets), load and
   * worst-second multipliers as means, attempts during the fault as a mean, breaker opens as the
   * mean (most in brackets), attempts before the first open and time to recover as the worst seed,
   * and the share of calls the policy's limit refused as the mean (`-` for a row without a limit).
   */
  toString(): string {
    const header = [
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
    ];
    const label: Record<MatrixVariant, string> = {
      ...VARIANT_LABELS,
      policy: this.policy || 'policy',
    };
    const rows = this.rows.map(({ scenario, variant, cells, label: own }) => {
      const availability = cells.map((c) => c.availability);
      const fault = cells.map((c) => c.faultAttempts);
      const opens = cells.map((c) => c.breakerOpens);
      const first = cells.map((c) => c.attemptsBeforeFirstOpen);
      const ttr = cells.map((c) => c.timeToRecover);
      return [
        scenario,
        own ?? label[variant],
        `${pct(mean(availability))} (${pct(Math.min(...availability))})`,
        mean(cells.map((c) => c.loadMultiplier)).toFixed(3),
        mean(cells.map((c) => c.worstSecond)).toFixed(2),
        fault[0] === null ? '-' : String(Math.round(mean(fault as number[]))),
        `${mean(opens).toFixed(1)} (${Math.max(...opens)})`,
        first.every((f) => f === null)
          ? '-'
          : first.some((f) => f === null)
            ? `${Math.max(...(first.filter((f) => f !== null) as number[]))}, never`
            : String(Math.max(...(first as number[]))),
        ttr.some((t) => t === null)
          ? '-'
          : ttr.some((t) => t === 'never')
            ? 'never'
            : (Math.max(...(ttr as number[])) / 1000).toFixed(0),
        cells.some((c) => c.limited === null)
          ? '-'
          : pct(mean(cells.map((c) => c.limited as number))),
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) =>
      cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    const title = `Scenario matrix${this.policy ? ` — policy ${this.policy}` : ''}: ${this.rate} calls/s, seeds ${this.seeds.join(', ')}`;
    return [
      title,
      '',
      line(header),
      line(widths.map((w) => '-'.repeat(w))),
      ...rows.map(line),
    ].join('\n');
  }
}
