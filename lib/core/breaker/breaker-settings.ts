import { PolicyConfigError, rejectUnknownKeys } from '../errors.js';

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
  /** Consecutive Transient attempts that trip; integer ≥ 0, 0 turns this trip off. Default 5. */
  consecutiveFailures?: number;
  /** Relative trip: the trip window's error rate must reach this multiple of the baseline; ≥ 1, 0 = off. Default 5. */
  errorRateMultiple?: number;
  /** Relative trip: absolute floor the trip window's error rate must also reach, in [0, 1]. Default 0.05. */
  minimumErrorRate?: number;
  /** Relative trip: Transient attempts the trip window must hold; integer ≥ 1. Default 2. */
  minimumFailures?: number;
  /** Relative and slow trips: attempts (Ok + Transient) the trip window must hold; integer ≥ 1. Default 20. */
  minimumThroughput?: number;
  /** Outcomes the error baseline must hold before the relative trip arms; integer ≥ 1. Default 100. */
  errorBaselineSamples?: number;
  /** Slow trip: an attempt is slow above this multiple of the latency median; > 1, 0 = off. Default 3. */
  slowCallMultiple?: number;
  /** Slow trip: share of the trip window's attempts that must be slow, in (0, 1]. Default 0.5. */
  slowCallRatio?: number;
  /** Successful attempts the latency baseline must hold before it is warm; integer ≥ 1. Default 20. */
  latencyBaselineSamples?: number;
  /** Length of the trip window, ms, ≥ 1000. Default 30000. */
  tripWindow?: number;
  /** Length of both baselines, ms, ≥ `tripWindow` and ≤ 100 × `tripWindow`. Default 300000. */
  baselineWindow?: number;
  /** First break, ms, > 0. Doubled on each consecutive open. Default 15000. */
  breakDuration?: number;
  /** Longest nominal break, ms, ≥ `breakDuration`. Default 120000. */
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
export interface ResolvedBreakerSettings extends Readonly<Required<Omit<BreakerSettings, 'recovery'>>> {
  readonly recovery: ResolvedRecovery | undefined;
}

/** Recovery defaults (DESIGN §3.6: 5 % first, ramp over 0.25 × the break; the 0.05 step is a library choice). */
export const RECOVERY_DEFAULTS: ResolvedRecovery = Object.freeze({ initialFraction: 0.05, rampFraction: 0.25, step: 0.05 });

/** Breaker defaults (DESIGN §3.6). */
export const BREAKER_DEFAULTS: ResolvedBreakerSettings = Object.freeze({
  consecutiveFailures: 5,
  errorRateMultiple: 5,
  minimumErrorRate: 0.05,
  minimumFailures: 2,
  minimumThroughput: 20,
  errorBaselineSamples: 100,
  slowCallMultiple: 3,
  slowCallRatio: 0.5,
  latencyBaselineSamples: 20,
  tripWindow: 30_000,
  baselineWindow: 300_000,
  breakDuration: 15_000,
  maximumBreak: 120_000,
  jitter: 'equal',
  halfOpenProbes: 1,
  closeAfter: 2,
  probeTimeout: 30_000,
  recovery: undefined,
});

/** Bounds the baseline rings (memory per breaker is proportional to this ratio). */
const MAXIMUM_WINDOW_RATIO = 100;

const KEYS = Object.keys(BREAKER_DEFAULTS) as (keyof BreakerSettings)[];
const RECOVERY_KEYS = Object.keys(RECOVERY_DEFAULTS) as (keyof RecoverySettings)[];

/**
 * Checks breaker settings and fills every default.
 * @param input a {@link BreakerSettings} object (`undefined` means all defaults)
 * @param prefix the field path used in error messages (`breaker`, `policies.payments.breaker`)
 * @returns frozen resolved settings
 * @throws PolicyConfigError naming `prefix.field`, the value and the rule, for a non-object input,
 *   an unknown key, or any value outside its range (ranges are on {@link BreakerSettings}).
 */
export function validateBreakerSettings(input: unknown, prefix = 'breaker'): ResolvedBreakerSettings {
  if (input === undefined) return BREAKER_DEFAULTS;
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new PolicyConfigError(prefix || 'breaker', input, 'must be an object of breaker settings');
  }
  const raw = input as Record<string, unknown>;
  rejectUnknownKeys(raw, KEYS, prefix, 'breaker setting');
  const pick = <K extends keyof BreakerSettings>(key: K): unknown => (raw[key] === undefined ? BREAKER_DEFAULTS[key] : raw[key]);
  const integer = (key: keyof BreakerSettings, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const value = pick(key);
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
      throw new PolicyConfigError(at(key), value, `must be an integer ${range}`);
    }
    return value;
  };
  const number = (key: keyof BreakerSettings, ok: (v: number) => boolean, rule: string): number => {
    const value = pick(key);
    if (typeof value !== 'number' || !Number.isFinite(value) || !ok(value)) {
      throw new PolicyConfigError(at(key), value, `must be ${rule}`);
    }
    return value;
  };

  const tripWindow = number('tripWindow', (v) => v >= 1000, 'a finite number of ms >= 1000');
  const baselineWindow = number(
    'baselineWindow',
    (v) => v >= tripWindow && v <= MAXIMUM_WINDOW_RATIO * tripWindow,
    `a finite number of ms in [tripWindow, ${MAXIMUM_WINDOW_RATIO} × tripWindow] = [${tripWindow}, ${MAXIMUM_WINDOW_RATIO * tripWindow}]`,
  );
  const breakDuration = number('breakDuration', (v) => v > 0, 'a finite number of ms > 0');
  const maximumBreak = number('maximumBreak', (v) => v >= breakDuration, `a finite number of ms >= breakDuration (${breakDuration})`);
  const jitter = pick('jitter');
  if (jitter !== 'equal' && jitter !== 'full' && jitter !== 'none') {
    throw new PolicyConfigError(at('jitter'), jitter, "must be 'equal', 'full' or 'none'");
  }

  return Object.freeze({
    consecutiveFailures: integer('consecutiveFailures', 0),
    errorRateMultiple: number('errorRateMultiple', (v) => v === 0 || v >= 1, 'a finite number >= 1, or 0 to turn the relative trip off'),
    minimumErrorRate: number('minimumErrorRate', (v) => v >= 0 && v <= 1, 'a number in [0, 1]'),
    minimumFailures: integer('minimumFailures', 1),
    minimumThroughput: integer('minimumThroughput', 1),
    errorBaselineSamples: integer('errorBaselineSamples', 1),
    slowCallMultiple: number('slowCallMultiple', (v) => v === 0 || v > 1, 'a finite number > 1, or 0 to turn the slow-call trip off'),
    slowCallRatio: number('slowCallRatio', (v) => v > 0 && v <= 1, 'a number in (0, 1]'),
    latencyBaselineSamples: integer('latencyBaselineSamples', 1),
    tripWindow,
    baselineWindow,
    breakDuration,
    maximumBreak,
    jitter,
    halfOpenProbes: integer('halfOpenProbes', 1, 100),
    closeAfter: integer('closeAfter', 1),
    probeTimeout: number('probeTimeout', (v) => v > 0, 'a finite number of ms > 0'),
    recovery: validateRecovery(raw.recovery, at('recovery')),
  });
}

function validateRecovery(input: unknown, field: string): ResolvedRecovery | undefined {
  if (input === undefined || input === false) return undefined;
  if (input === true) return RECOVERY_DEFAULTS;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new PolicyConfigError(field, input, 'must be true, false or { initialFraction, rampFraction, step }');
  }
  const raw = input as Record<string, unknown>;
  rejectUnknownKeys(raw, RECOVERY_KEYS, field, 'recovery setting');
  const fraction = (key: keyof RecoverySettings, max: number, rule: string): number => {
    const value = raw[key] === undefined ? RECOVERY_DEFAULTS[key] : raw[key];
    if (typeof value !== 'number' || !(value > 0 && value <= max)) {
      throw new PolicyConfigError(`${field}.${key}`, value, `must be ${rule}`);
    }
    return value;
  };
  return Object.freeze({
    initialFraction: fraction('initialFraction', 1, 'a number in (0, 1]'),
    rampFraction: fraction('rampFraction', 10, 'a number in (0, 10]'),
    step: fraction('step', 1, 'a number in (0, 1]'),
  });
}
