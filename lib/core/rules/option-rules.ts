import { type ValueRule, integerRule, numberRule, oneOfRule, valueRule } from './value-rule.js';

/**
 * Every rule a policy setting obeys, each written once. `policy.with()`, `RetryBudget`, `Breaker`,
 * `Backoff`, `PolicyScope`, the testing kit and the config parser (`lib/config`, which converts
 * `"10s"` strings to ms first) all check against these, so a value is refused with the same words
 * wherever it is given. Ranges come from DESIGN §3 unless a comment says otherwise.
 * @internal
 */

/**
 * The most attempts a policy may make (a library bound). With the default backoff (100 ms doubling
 * to a 30 s cap) 100 attempts already wait ≈ 48 minutes; a larger count is a typo (a duration
 * written in the attempts field), and the retry budget, not `attempts`, is what limits a storm.
 */
export const MAXIMUM_ATTEMPTS = 100;

/** `attempts` (policy option, per-call `run` option, config): total attempts including the first. */
export const ATTEMPTS_RULE = numberRule(
  `must be an integer >= 1 (total attempts, including the first), at most ${MAXIMUM_ATTEMPTS}`,
  (v) => Number.isInteger(v) && v >= 1 && v <= MAXIMUM_ATTEMPTS,
);

/** A delay, ms: 0 means "at once" (backoff delays and caps, simulated latencies). */
/** `restarts`: how often a checkpointed stream may be re-opened after mid-stream failures. */
export const RESTARTS_RULE = numberRule(
  `must be an integer in [0, ${MAXIMUM_ATTEMPTS}] (restarts of a checkpointed stream)`,
  (v) => Number.isInteger(v) && v >= 0 && v <= MAXIMUM_ATTEMPTS,
);

export const DELAY_RULE = numberRule('must be a finite duration in ms >= 0', (v) => v >= 0);

/**
 * A bound on a call or an attempt (`deadline`, `attemptTimeout`), ms. 0 is refused: it would fail
 * every call before its first attempt; leaving the bound out is how to say "no bound".
 */
export const BOUND_RULE = numberRule('must be a finite duration in ms > 0', (v) => v > 0);

/**
 * A policy's `deadline` or `attemptTimeout`, ms: > 0, `Infinity` meaning no bound (as cockatiel and
 * Polly users write it; leaving it out, or `undefined` in `with()`, says the same). 0 and NaN are refused.
 */
export const CALL_BOUND_RULE: ValueRule<number> = valueRule(
  'must be a duration in ms > 0 (Infinity, or leaving it out, for no bound)',
  (v) => typeof v === 'number' && v > 0,
);

/**
 * A window or a wait that may have no end, ms, `Infinity` meaning for ever: a logging listener's
 * repeat and incident windows, how long a simulation follows calls in flight, the time left of an
 * ambient deadline. NaN and negatives are refused. Where `Infinity` would mean that nothing ever
 * happens (a debounce, a backoff delay) the value takes {@link DELAY_RULE} instead.
 */
export const SPAN_RULE: ValueRule<number> = valueRule(
  'must be a duration in ms >= 0 (or Infinity)',
  (v) => typeof v === 'number' && v >= 0,
);

/** A positive window that may have no end, ms (`Infinity`: never), e.g. a period between progress reports. */
export const POSITIVE_SPAN_RULE: ValueRule<number> = valueRule(
  'must be a duration in ms > 0 (or Infinity)',
  (v) => typeof v === 'number' && v > 0,
);

/**
 * `continuing` of `policy.run` / `tryRun` (a call carried on after its accepted value broke,
 * `CallContinuation`): both fields are required; `error` may be anything.
 */
export const CONTINUATION_RULES = {
  attempts: integerRule(1, Number.MAX_SAFE_INTEGER, 'the attempts the call already made'),
  deadlineAt: valueRule<number>(
    'must be a clock reading in ms, or Infinity for no deadline',
    (v) => typeof v === 'number' && !Number.isNaN(v),
  ),
} as const;

/** The jitter names config and `Backoff.exponential({ jitter })` and breaker settings accept (DESIGN §3.4, §3.6). */
export const JITTER_NAMES = ['full', 'equal', 'none'] as const;

/** A jitter name. */
export const JITTER_NAME_RULE = oneOfRule(JITTER_NAMES);

/** A multiplier, >= 1: the exponential backoff's growth per retry, the adaptive throttle's K. */
export const MULTIPLIER_RULE = numberRule('must be a finite number >= 1', (v) => v >= 1);

/** A switch. */
export const BOOLEAN_RULE: ValueRule<boolean> = valueRule(
  'must be true or false',
  (v) => typeof v === 'boolean',
);

/** A callback. */
export const FUNCTION_RULE: ValueRule<(...args: never[]) => unknown> = valueRule(
  'must be a function',
  (v) => typeof v === 'function',
);

/** The jitter source. */
export const RANDOM_RULE: ValueRule<() => number> = valueRule(
  'must be a function returning a number in [0, 1)',
  (v) => typeof v === 'function',
);

/** An HTTP status code, as a classifier reads it from an answer or an error and config lists it (RFC 9110 §15: 100-599). */
export const HTTP_STATUS_RULE: ValueRule<number> = {
  rule: 'must be an integer in [100, 599]',
  accepts: isHttpStatus,
};

/**
 * The test of {@link HTTP_STATUS_RULE} as a plain function: `Classifier.http` runs it on every
 * outcome, and a direct call can be inlined, where a rule built by `integerRule` calls its test
 * through a call site shared by every rule (`bench/before-after.ts`, http preset: 1.058, 0.985, 1.058
 * through the rule, 0.965, 1.026, 0.986 with this).
 */
export function isHttpStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}

/** A probability or share, in [0, 1]. */
export const FRACTION_RULE = numberRule('must be a number in [0, 1]', (v) => v >= 0 && v <= 1);

/**
 * The lowest non-zero retry-budget floor, tokens per second: one token a day. The floor's one job
 * is to let a quiet client retry; the retry-after hint it gives is `1 / minimumPerSecond` s, so a
 * floor below one a day promises hints beyond a day — the longest window a sliding-window budget
 * may have (`samplingDuration` ≤ 1 day) and the cap on `Retry-After` (DESIGN §4). Smaller
 * positive values (1e-300, denormals) also made the refill rate round to 0 while claiming a floor.
 * 0 stays valid: no floor, the fraction is the only source (DESIGN §3.5).
 */
export const MINIMUM_FLOOR_PER_SECOND = 1 / 86_400;

/**
 * The highest retry-budget floor, tokens per second (a library bound): the bucket holds 10 s of it,
 * so a million a second is a budget of ten million retries — no budget at all, which is
 * `RetryBudget.none` (config `budget: false`).
 */
export const MAXIMUM_FLOOR_PER_SECOND = 1_000_000;

/** Retry-budget token-bucket options (DESIGN §3.5). */
export const BUCKET_RULES = {
  fraction: FRACTION_RULE,
  minimumPerSecond: numberRule(
    `must be 0 (no floor) or a number of tokens per second in [${MINIMUM_FLOOR_PER_SECOND.toPrecision(4)} (one a day), ${MAXIMUM_FLOOR_PER_SECOND}]`,
    (v) => v === 0 || (v >= MINIMUM_FLOOR_PER_SECOND && v <= MAXIMUM_FLOOR_PER_SECOND),
  ),
} as const;

/** Sliding-window retry-budget options (DESIGN §3.5). */
export const WINDOW_RULES = {
  retryRatio: numberRule(
    'must be a number in [0, 1] (retries per logical call)',
    (v) => v >= 0 && v <= 1,
  ),
  samplingDuration: numberRule(
    'must be a duration in ms from 1000 (1 s) to 86400000 (1 day)',
    (v) => v >= 1000 && v <= 86_400_000,
  ),
  minimumThroughput: integerRule(1, Number.MAX_SAFE_INTEGER, 'logical calls in the window'),
} as const;

/**
 * The most keys a `PolicyScope` may hold (a library bound): ≈ 15 KB per key with a breaker at the
 * default windows (DESIGN §3.11) makes a million keys ≈ 15 GB, past any process this runs in.
 */
export const MAXIMUM_SCOPE_KEYS = 1_000_000;

/**
 * The bound of a scope's keys, in the words of what its keys are: `maximumKeys` of a `PolicyScope`,
 * and the bounds that become one (`maximumHosts` of the HTTP client, `maximumServices` of the gRPC
 * interceptor).
 */
export function keyBoundRule(what: string): ValueRule<number> {
  return numberRule(
    `must be an integer >= 1 (the most ${what}), at most ${MAXIMUM_SCOPE_KEYS}`,
    (v) => Number.isInteger(v) && v >= 1 && v <= MAXIMUM_SCOPE_KEYS,
  );
}

/** `maximumKeys` of a scope. */
export const MAXIMUM_KEYS_RULE = keyBoundRule('keys a scope holds');

/** Bounds the baseline rings (memory per breaker is proportional to `baselineWindow / tripWindow`). */
export const MAXIMUM_WINDOW_RATIO = 100;

/** A breaker window, ms: at least a second (DESIGN §3.6). */
const WINDOW_RULE = numberRule('must be a finite duration in ms >= 1000', (v) => v >= 1000);

/**
 * Circuit-breaker settings, field by field (ranges on `BreakerSettings`, DESIGN §3.6). Two rules
 * relate fields and are checked once the settings are merged (`validateBreakerSettings`):
 * `baselineWindow` in [tripWindow, 100 × tripWindow], `maximumBreak` >= `breakDuration`.
 * `recovery` has its own table ({@link RECOVERY_RULES}).
 */
export const BREAKER_RULES = {
  consecutiveFailures: integerRule(0, Number.MAX_SAFE_INTEGER, ''),
  streakSignificance: numberRule(
    'must be a number in (0, 1], e.g. 1e-8 (1: a run of consecutiveFailures trips at any error rate)',
    (v) => v > 0 && v <= 1,
  ),
  failureRateFloor: numberRule('must be a number in [0, 1) (0 = no floor)', (v) => v >= 0 && v < 1),
  recentOutcomes: integerRule(1, 10_000, ''),
  errorRateMultiple: numberRule(
    'must be a finite number >= 1, or 0 to turn the relative trip off',
    (v) => v === 0 || v >= 1,
  ),
  minimumErrorRate: FRACTION_RULE,
  minimumFailures: integerRule(1, Number.MAX_SAFE_INTEGER, ''),
  minimumThroughput: integerRule(1, Number.MAX_SAFE_INTEGER, ''),
  errorBaselineSamples: integerRule(1, Number.MAX_SAFE_INTEGER, ''),
  slowCallMultiple: numberRule(
    'must be a finite number > 1, or 0 to turn the slow-call trip off',
    (v) => v === 0 || v > 1,
  ),
  slowCallRatio: numberRule('must be a number in (0, 1]', (v) => v > 0 && v <= 1),
  latencyBaselineSamples: integerRule(1, Number.MAX_SAFE_INTEGER, ''),
  tripWindow: WINDOW_RULE,
  baselineWindow: WINDOW_RULE,
  breakDuration: BOUND_RULE,
  maximumBreak: BOUND_RULE,
  jitter: JITTER_NAME_RULE,
  halfOpenProbes: integerRule(1, 100, ''),
  closeAfter: integerRule(1, Number.MAX_SAFE_INTEGER, ''),
  probeTimeout: BOUND_RULE,
  recovery: null,
} as const satisfies Record<string, ValueRule | null>;

/** The breaker settings that are durations (config may write them as `"15s"`). */
export const BREAKER_DURATION_KEYS = [
  'breakDuration',
  'maximumBreak',
  'tripWindow',
  'baselineWindow',
  'probeTimeout',
] as const;

/** The opt-in Recovering state's parameters (DESIGN §3.6). */
export const RECOVERY_RULES = {
  initialFraction: numberRule('must be a number in (0, 1]', (v) => v > 0 && v <= 1),
  rampFraction: numberRule('must be a number in (0, 10]', (v) => v > 0 && v <= 10),
  step: numberRule('must be a number in (0, 1]', (v) => v > 0 && v <= 1),
} as const;
