import { PolicyConfigError } from '../errors.js';
import { BREAKER_RULES, MAXIMUM_WINDOW_RATIO, RECOVERY_RULES } from '../rules/option-rules.js';
import { isPlainObject, optionProblems } from '../rules/value-rule.js';

/** How the served break is randomised around its nominal length (DESIGN §3.6). */
export type BreakJitter = 'equal' | 'full' | 'none';

/**
 * The opt-in Recovering state's parameters (DESIGN §3.6). Fractions are shares of offered attempts.
 */
export interface RecoverySettings {
  /** Share of attempts admitted when Recovering starts, in (0, 1]. Default 0.05 (5 %). */
  initialFraction?: number;
  /** The clock ramp lasts this multiple of the break just served, > 0 and ≤ 10. Default 0.25. */
  rampFraction?: number;
  /** What each fast success adds to the AIMD estimate, in (0, 1]. Default 0.05. */
  step?: number;
}

/**
 * Circuit breaker settings as written in a policy or in `forRoot` config; every field is optional.
 * Durations are milliseconds. Defaults come from DESIGN §3.6 unless marked as a library choice.
 */
export interface BreakerSettings {
  /**
   * Consecutive Transient attempts that trip; integer ≥ 0, 0 turns the run trip off. A number you
   * set means what it says: `consecutiveFailures: N` alone trips on N in a row whatever the history
   * (it resolves `streakSignificance` to 1 and, unless you set it, `failureRateFloor` to 0). Left
   * unset, or set beside `streakSignificance`, it is the shortest run that trips (a healthy
   * dependency's, and a cold start's): the measured streak asks for longer runs where the recent
   * error rate makes a run likely, and the floor applies. Default 5, measured.
   */
  consecutiveFailures?: number;
  /**
   * A run of failures trips only when, at the error rate the recent outcomes showed before it, a run
   * that long would be no likelier than this (per run); in (0, 1]. 10⁻⁸ gives 5 at a 2 % error rate,
   * 12 at 20 %, 21 at 40 %, 27 at 50 % (the floor caps the rate); 1 makes every run of
   * `consecutiveFailures` trip. Default 1e-8 (the scenario matrix's), or 1 when `consecutiveFailures`
   * is set without it.
   */
  streakSignificance?: number;
  /**
   * No failure trip while fewer than this share of the recent outcomes failed (the common 50 %
   * trip point, used as a floor); also the highest error rate that lengthens
   * the run. In [0, 1); 0 = no floor and a fixed run of `consecutiveFailures`. Default 0.5, or 0 when
   * `consecutiveFailures` is set without `streakSignificance` (the run you wrote trips whatever the history).
   */
  failureRateFloor?: number;
  /** Outcomes the floor and the recent error rate look at (the last ones, within `tripWindow`); integer in [1, 10000]. Default 100. */
  recentOutcomes?: number;
  /** Relative trip: the trip window's error rate must reach this multiple of the baseline; ≥ 1, 0 = off. Default 0 (off). */
  errorRateMultiple?: number;
  /** Relative trip: absolute floor the trip window's error rate must also reach, in [0, 1]. Default 0.05. */
  minimumErrorRate?: number;
  /** Relative trip: Transient attempts the trip window must hold; integer ≥ 1. Default 2. */
  minimumFailures?: number;
  /** Relative and slow trips: attempts (Ok + Transient) the trip window must hold; integer ≥ 1. Default 20. */
  minimumThroughput?: number;
  /** Outcomes the error baseline must hold before the relative trip arms; integer ≥ 1. Default 100. */
  errorBaselineSamples?: number;
  /** Slow trip: an attempt is slow above this multiple of the latency median; > 1, 0 = off. Default 0 (off). */
  slowCallMultiple?: number;
  /** Slow trip: share of the trip window's attempts that must be slow, in (0, 1]. Default 0.5. */
  slowCallRatio?: number;
  /** Successful attempts the latency baseline must hold before it is warm; integer ≥ 1. Default 20. */
  latencyBaselineSamples?: number;
  /** Length of the trip window, ms, ≥ 1000. Default 30000. */
  tripWindow?: number;
  /** Length of both baselines, ms, ≥ `tripWindow` and ≤ 100 × `tripWindow`. Default 300000. */
  baselineWindow?: number;
  /** First break, ms, > 0. Doubled on each consecutive open up to `maximumBreak`. Default 1000 (a probe a second while open). */
  breakDuration?: number;
  /** Longest nominal break, ms, ≥ `breakDuration`. Default 1000, or `breakDuration` when that is longer (no doubling). */
  maximumBreak?: number;
  /** Randomisation of the served break. Default `'equal'` (at least half the break is served). */
  jitter?: BreakJitter;
  /** Concurrent half-open probes; integer in [1, 100]. Default 1. */
  halfOpenProbes?: number;
  /** Consecutive successful probes that end HalfOpen; integer ≥ 1. Default 2. */
  closeAfter?: number;
  /**
   * A probe that has not settled after this many ms frees its slot, > 0. The executor passes its
   * `attemptTimeout` when one is set. Default 30000 (a library choice).
   */
  probeTimeout?: number;
  /** Opt-in Recovering state: `true` for defaults or its parameters; `false` (default) closes directly. */
  recovery?: boolean | RecoverySettings;
}

/** Recovery parameters with defaults filled in. */
export type ResolvedRecovery = Readonly<Required<RecoverySettings>>;

/** {@link BreakerSettings} with every default filled in; `recovery` is `undefined` when off. */
export interface ResolvedBreakerSettings extends Readonly<
  Required<Omit<BreakerSettings, 'recovery'>>
> {
  readonly recovery: ResolvedRecovery | undefined;
}

/** Recovery defaults (DESIGN §3.6: 5 % first, ramp over 0.25 × the break; the 0.05 step is a library choice). */
export const RECOVERY_DEFAULTS: ResolvedRecovery = Object.freeze({
  initialFraction: 0.05,
  rampFraction: 0.25,
  step: 0.05,
});

/**
 * Breaker defaults (DESIGN §3.6): each is the value the scenario matrix measured as costing no
 * availability where the dependency still serves; docs/circuit-breaker.md gives the rows.
 */
export const BREAKER_DEFAULTS: ResolvedBreakerSettings = Object.freeze({
  consecutiveFailures: 5,
  streakSignificance: 1e-8,
  failureRateFloor: 0.5,
  recentOutcomes: 100,
  errorRateMultiple: 0,
  minimumErrorRate: 0.05,
  minimumFailures: 2,
  minimumThroughput: 20,
  errorBaselineSamples: 100,
  slowCallMultiple: 0,
  slowCallRatio: 0.5,
  latencyBaselineSamples: 20,
  tripWindow: 30_000,
  baselineWindow: 300_000,
  breakDuration: 1000,
  maximumBreak: 1000,
  jitter: 'equal',
  halfOpenProbes: 1,
  closeAfter: 2,
  probeTimeout: 30_000,
  recovery: undefined,
});

/**
 * Common breaker numbers that the defaults do not use, for comparison
 * (`Breaker.with(SEED_BREAKER_SETTINGS)`): 5 Transient attempts in a row trip at any error rate (no
 * floor), the relative trip (5 × baseline, 5 % absolute) and the slow trip (3 × median) on, breaks
 * of 15 s doubled to 2 min. What they cost in the scenario matrix is in docs/circuit-breaker.md.
 */
export const SEED_BREAKER_SETTINGS: Readonly<BreakerSettings> = Object.freeze({
  failureRateFloor: 0,
  errorRateMultiple: 5,
  slowCallMultiple: 3,
  breakDuration: 15_000,
  maximumBreak: 120_000,
});

/**
 * The problems of breaker settings field by field ({@link BREAKER_RULES}, `recovery` included):
 * not a plain object, unknown keys, values out of range, `null`. The rules that relate two fields
 * are {@link resolveBreakerSettings}'s.
 * @param input the settings as given (durations already in ms)
 * @param prefix the field path used in the problems (`breaker`, `policies.payments.breaker`)
 * @internal the config parser's (it reports every problem of a section, where core throws the first)
 */
export function breakerSettingProblems(input: unknown, prefix = 'breaker'): PolicyConfigError[] {
  const problems = optionProblems(input, BREAKER_RULES, prefix, 'breaker setting');
  const recovery = isPlainObject(input) ? input.recovery : undefined;
  if (recovery === undefined || typeof recovery === 'boolean') return problems;
  if (!isPlainObject(recovery))
    problems.push(
      new PolicyConfigError(
        `${prefix}.recovery`,
        recovery,
        'must be true, false or { initialFraction, rampFraction, step }',
      ),
    );
  else
    problems.push(
      ...optionProblems(recovery, RECOVERY_RULES, `${prefix}.recovery`, 'recovery setting'),
    );
  return problems;
}

/**
 * Fills every default into settings whose fields are valid (per {@link breakerSettingProblems}) and
 * checks the rules that relate fields: `baselineWindow` in [tripWindow, 100 × tripWindow],
 * `maximumBreak` >= `breakDuration` (unset, the cap follows a longer first break). A
 * `consecutiveFailures` given without `streakSignificance` is taken literally (DESIGN §3.6: a number
 * the user sets means what it says): `streakSignificance` 1, and `failureRateFloor` 0 unless given.
 * @throws PolicyConfigError naming `prefix.baselineWindow` or `prefix.maximumBreak`
 * @internal the config parser's (it checks the fields per section, then these once merged)
 */
export function resolveBreakerSettings(
  input: Readonly<Record<string, unknown>>,
  prefix = 'breaker',
): ResolvedBreakerSettings {
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  const settings = { ...BREAKER_DEFAULTS, ...definedOnly(input) } as {
    -readonly [K in keyof ResolvedBreakerSettings]: ResolvedBreakerSettings[K];
  };
  // Unset, the cap follows a longer first break: `breakDuration: '10s'` alone means 10 s breaks.
  if (input.maximumBreak === undefined && settings.breakDuration > settings.maximumBreak)
    settings.maximumBreak = settings.breakDuration;
  // A run the user wrote trips as written: neither the measured streak nor the default floor lengthens or blocks it.
  if (input.consecutiveFailures !== undefined && input.streakSignificance === undefined) {
    settings.streakSignificance = 1;
    if (input.failureRateFloor === undefined) settings.failureRateFloor = 0;
  }
  const { tripWindow, baselineWindow, breakDuration, maximumBreak } = settings;
  if (baselineWindow < tripWindow || baselineWindow > MAXIMUM_WINDOW_RATIO * tripWindow) {
    throw new PolicyConfigError(
      at('baselineWindow'),
      baselineWindow,
      `must be a finite duration in ms in [tripWindow, ${MAXIMUM_WINDOW_RATIO} × tripWindow] = [${tripWindow}, ${MAXIMUM_WINDOW_RATIO * tripWindow}]`,
    );
  }
  if (maximumBreak < breakDuration)
    throw new PolicyConfigError(
      at('maximumBreak'),
      maximumBreak,
      `must be a finite duration in ms >= breakDuration (${breakDuration})`,
    );
  return Object.freeze({ ...settings, recovery: resolveRecovery(input.recovery) });
}

/**
 * Checks breaker settings field by field, then the rules that relate fields (`baselineWindow` in
 * [tripWindow, 100 × tripWindow], `maximumBreak` >= `breakDuration`), and fills every default.
 * @param input a {@link BreakerSettings} object (`undefined` means all defaults)
 * @param prefix the field path used in error messages (`breaker`, `policies.payments.breaker`)
 * @returns frozen resolved settings
 * @throws PolicyConfigError naming `prefix.field`, the value and the rule, for a non-object input,
 *   an unknown key, or any value outside its range (ranges are on {@link BreakerSettings}).
 */
export function validateBreakerSettings(
  input: unknown,
  prefix = 'breaker',
): ResolvedBreakerSettings {
  if (input === undefined) return BREAKER_DEFAULTS;
  const problems = breakerSettingProblems(input, prefix);
  if (problems.length > 0) throw problems[0];
  return resolveBreakerSettings(input as Record<string, unknown>, prefix);
}

function resolveRecovery(input: unknown): ResolvedRecovery | undefined {
  if (input === undefined || input === false) return undefined;
  if (input === true) return RECOVERY_DEFAULTS;
  return Object.freeze({
    ...RECOVERY_DEFAULTS,
    ...definedOnly(input as Record<string, unknown>),
  }) as ResolvedRecovery;
}

/** The own entries of `input` whose value is not `undefined` (left out). */
function definedOnly(input: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}
