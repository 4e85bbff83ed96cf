import { type Backoff, defaultBackoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { Classifier } from '../classification/classifier.js';
import { type Clock, SystemClock } from '../time/clock.js';
import { Drain } from '../signals/drain.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Fallback, type FallbackFunction } from '../fallback/fallback.js';
import { Hedge } from '../hedging/hedge-value.js';
import { Limit } from '../limits/limit-value.js';
import { Saturation } from '../limits/saturation.js';
import { AttemptCeiling } from '../estimators/attempt-ceiling.js';
import { PolicyConfigError } from '../errors.js';
import {
  ATTEMPTS_RULE,
  BOOLEAN_RULE,
  RESTARTS_RULE,
  CALL_BOUND_RULE,
  RANDOM_RULE,
} from '../rules/option-rules.js';
import { CLOCK_RULE } from '../time/clock-rule.js';
import {
  type CallEventSink,
  type ResolvedPolicyOptions,
  toObserver,
} from '../execution/executable-policy.js';
import { type ValueRule, checkOptions, valueRule } from '../rules/value-rule.js';

/**
 * Everything a policy can be told (DESIGN §3.1). All durations are milliseconds.
 * Options not listed here (breaker, hedge, limiter, …) arrive with their features.
 */
export interface PolicyOptions {
  /** Name used in events, logs and errors. Default `''`. */
  name?: string;
  /** Total attempts including the first, an integer in [1, 100] (1 = no retries). Default 3. */
  attempts?: number;
  /** Delay curve between attempts. Default `Backoff.exponential()` (100 ms base, full jitter, 30 s cap). */
  backoff?: Backoff;
  /** How retries are funded. Default `RetryBudget.automatic`; `RetryBudget.none` turns it off. */
  budget?: RetryBudget;
  /**
   * Circuit breaker: `Breaker.default`, `Breaker.with({...})`, `Breaker.using(instance)`; `undefined`
   * (the default of `Resilience.default`) = none. It samples every attempt (DESIGN §3.6).
   */
  breaker?: Breaker;
  /** Bound on the whole call (attempts, backoff, pauses), ms > 0; `undefined` or `Infinity` = none. */
  deadline?: number;
  /**
   * Bound on one attempt, ms > 0; `undefined` or `Infinity` = none. For a stream (work returning an
   * AsyncIterable or Observable) it bounds the wait for the first element, then each silence while
   * the consumer waits for the next (`AttemptStalledError`), never the whole stream.
   */
  attemptTimeout?: number;
  /**
   * How many times a checkpointed stream (`policy.run({ start, checkpoint, source })`) may be
   * re-opened from its last checkpoint after mid-stream failures worth retrying, an integer in
   * [0, 100]. Default 3.
   */
  restarts?: number;
  /**
   * Also bound the call by the inbound caller's remaining time from the ambient context (DESIGN §3.9,
   * filled by the inbound middleware): the call gets the tighter of `deadline` and what the caller
   * has left, so an inbound value can shorten this policy's deadline, never extend it. Default false.
   */
  useAmbientDeadline?: boolean;
  /**
   * Apply the ambient criticality's budget rule (DESIGN §3.5, §3.9): work running as `sheddable`
   * (`AmbientCriticality.run('sheddable', fn)`, `@Criticality('sheddable')`, or an inbound header)
   * retries only while at least half the budget's capacity would remain; other levels spend as
   * usual. Default false (criticality ignored).
   */
  useAmbientCriticality?: boolean;
  /**
   * The shutdown switch (`new Drain()`; the Nest registry gives its own to every policy): once
   * started, calls stop retrying and a call waiting in backoff settles at once with its failure
   * (stop reason `draining`). Default `undefined` (never drains).
   */
  drain?: Drain;
  /** Turns outcomes into verdicts. Default `Classifier.default`. */
  classifier?: Classifier;
  /**
   * The policy's one event listener or observer ({@link CallObserver}: call start, attempts, retries,
   * refusals, call end, breaker transitions); replaces any, so the telemetry and logging that
   * `withTelemetry()`/`withLogging()` (or `ResilienceModule`) attached stop. `withListener` adds
   * instead; `onEvent: undefined` removes them all. Default none.
   */
  onEvent?: CallEventSink;
  /**
   * Bounds the attempts in flight at once (DESIGN §3.8): `Limit.concurrency(n, { queue })` (a
   * bulkhead) or `Limit.adaptive({ initial, minimum, maximum, queue })`; a slot is held per attempt.
   * An attempt finding no free slot waits in the FIFO queue or is refused (`CallRejectedError`
   * reason `Limited`, stop reason `limited`) after the guarded pause; refused work never starts.
   * Or bounds the attempts started per period: `Limit.rate({ limit, per, burst, maximumWait })`, a
   * token per attempt, refused the same way (or waiting up to `maximumWait` for its token).
   * `undefined` (the default) = no limit.
   */
  limit?: Limit;
  /**
   * Answers a call that stops without a value of its own — refused, attempts exhausted, deadline —
   * with a stand-in: `(stop) => value` or `Fallback.to(fn, { on })` (see {@link Fallback}). Never on a
   * Permanent answer unless listed in `on`. `undefined` (the default) = none.
   */
  fallback?: Fallback | FallbackFunction;
  /**
   * `Hedge.at(quantile, { maximumConcurrent, suppressAt, winRate })`: a repeatable call's next attempt
   * starts when the running one has outlasted the live `quantile` of recent successful latency; the
   * first success wins and the others are aborted (see {@link Hedge}). A hedge is an attempt: it
   * counts against `attempts` and is paid from the retry budget. `undefined` (the default) = none.
   */
  hedge?: Hedge;
  /**
   * Every call of this policy is safe to send more than once at the same time (a read, an
   * idempotent write): hedging applies to it. `RunOptions.repeatable` says it per call. Default false.
   */
  repeatable?: boolean;
  /**
   * `Saturation.above(multiple)`: while the event loop's delay is above `multiple` × its normal (and
   * above 20 ms), measured terms (the adaptive limit) stop learning. Nothing is refused or delayed.
   * `undefined` (the default) = off.
   */
  saturation?: Saturation;
  /**
   * `AttemptCeiling.default` (3 × the p95) or `AttemptCeiling.measured({ multiple, quantile })`:
   * once 100 successful attempts are in the last 5 minutes, each attempt is bounded by `multiple` ×
   * the `quantile` of their durations when that is shorter than its bound would be (`attemptTimeout`,
   * the time left on the deadline, or none); it only ever tightens. It stands aside while more than
   * 15 % of recent attempts outlast it (the dependency's latency moved), until fewer than 5 % do.
   * `undefined` = none; `Resilience.http` has `AttemptCeiling.default` (docs/measured.md says why).
   */
  attemptCeiling?: AttemptCeiling;
  /**
   * Whether the measured terms are in force (DESIGN §3.8): the attempt ceiling, `Backoff.measured`'s
   * base, the hedge threshold and the saturation probe. `false` turns every one off — no ceiling, the
   * written backoff base — and refuses `hedge` and `saturation` (a `PolicyConfigError` names the
   * field): both only act on measurements. Default true.
   */
  adaptive?: boolean;
  /** Time source. Default `SystemClock.instance`. */
  clock?: Clock;
  /** Uniform [0, 1) source for jitter. Default `Math.random`. */
  random?: () => number;
}

/** Settings of `Resilience.default`. */
export const DEFAULT_OPTIONS: ResolvedPolicyOptions = Object.freeze({
  name: '',
  attempts: 3,
  backoff: defaultBackoff,
  budget: RetryBudget.automatic,
  breaker: undefined,
  deadline: undefined,
  attemptTimeout: undefined,
  restarts: 3,
  useAmbientDeadline: false,
  useAmbientCriticality: false,
  drain: undefined,
  classifier: Classifier.default,
  onEvent: undefined,
  limit: undefined,
  fallback: undefined,
  hedge: undefined,
  repeatable: false,
  saturation: undefined,
  attemptCeiling: undefined,
  adaptive: true,
  clock: SystemClock.instance,
  random: Math.random,
});

function instance(type: string, test: (value: unknown) => boolean): ValueRule {
  return valueRule(`must be ${type}`, test);
}

/** The rule of every policy option (DESIGN §3.1); the shared ones come from the rules module. */
const OPTION_RULES: Record<keyof PolicyOptions, ValueRule> = {
  name: instance('a string', (v) => typeof v === 'string'),
  attempts: ATTEMPTS_RULE,
  backoff: instance(
    'a Backoff (Backoff.exponential(), .constant(ms), .none, .custom(fn))',
    (v) => typeof (v as Backoff)?.compute === 'function',
  ),
  budget: instance(
    'a RetryBudget (RetryBudget.automatic, .none, .of(), .shared(), .slidingWindow())',
    (v) => v instanceof RetryBudget,
  ),
  breaker: instance(
    'a Breaker (Breaker.default, Breaker.with({...}), Breaker.using(instance))',
    (v) => v instanceof Breaker,
  ),
  deadline: CALL_BOUND_RULE,
  attemptTimeout: CALL_BOUND_RULE,
  restarts: RESTARTS_RULE,
  useAmbientDeadline: BOOLEAN_RULE,
  useAmbientCriticality: BOOLEAN_RULE,
  drain: instance('a Drain (new Drain())', (v) => v instanceof Drain),
  classifier: instance(
    'a Classifier (Classifier.default or Classifier.of(...rules))',
    (v) => v instanceof Classifier,
  ),
  onEvent: instance(
    'a function (event) => void or a CallObserver { callStarted?, runAttempt?, event?, callEnded? }',
    isEventSink,
  ),
  limit: instance(
    'a Limit (Limit.concurrency(n, { queue }), Limit.adaptive({ initial, minimum, maximum, queue }), Limit.rate({ limit, per, burst }))',
    (v) => v instanceof Limit,
  ),
  fallback: instance(
    'a function (stop) => value, or Fallback.to(fn, { on })',
    (v) => typeof v === 'function' || v instanceof Fallback,
  ),
  hedge: instance(
    'a Hedge (Hedge.at(quantile, { maximumConcurrent, suppressAt, winRate }))',
    (v) => v instanceof Hedge,
  ),
  repeatable: BOOLEAN_RULE,
  saturation: instance('a Saturation (Saturation.above(multiple))', (v) => v instanceof Saturation),
  attemptCeiling: instance(
    'an AttemptCeiling (AttemptCeiling.default, AttemptCeiling.measured({ multiple, quantile }))',
    (v) => v instanceof AttemptCeiling,
  ),
  adaptive: BOOLEAN_RULE,
  clock: CLOCK_RULE,
  random: RANDOM_RULE,
};

/**
 * Merges `changes` over `base`, validating every given field.
 * @throws PolicyConfigError naming the field, the value and the rule for any invalid value or unknown key.
 */
export function mergeOptions(
  base: ResolvedPolicyOptions,
  changes: PolicyOptions,
): ResolvedPolicyOptions {
  checkOptions(changes, OPTION_RULES, '', 'policy option');
  const merged = { ...base };
  for (const [key, value] of Object.entries(changes)) {
    // `deadline: undefined` (or `breaker`, …) explicitly removes it; other undefined values keep the base.
    if (value !== undefined || REMOVABLE.has(key)) {
      // An unbounded `deadline` / `attemptTimeout` (Infinity) is stored as no bound, as leaving it out.
      const stored =
        value === Infinity && (key === 'deadline' || key === 'attemptTimeout') ? undefined : value;
      (merged as Record<string, unknown>)[key] =
        value === undefined
          ? value
          : key === 'onEvent'
            ? toObserver(value as CallEventSink)
            : key === 'fallback'
              ? Fallback.from(value as FallbackFunction)
              : stored;
    }
  }
  checkAdaptive(merged);
  return Object.freeze(merged);
}

/** `adaptive: false` turns the measured terms off: a hedge or a saturation guard would act on none. */
function checkAdaptive(options: ResolvedPolicyOptions): void {
  if (options.adaptive) return;
  const field =
    options.hedge !== undefined
      ? 'hedge'
      : options.saturation !== undefined
        ? 'saturation'
        : undefined;
  if (field === undefined) return;
  throw new PolicyConfigError(
    field,
    options[field],
    `must be left out when adaptive is false (${field === 'hedge' ? 'the hedge threshold is measured' : 'the saturation guard only freezes measured terms'}, and adaptive: false turns them off)`,
  );
}

/** Options that `undefined` explicitly removes (other undefined values keep the base). */
const REMOVABLE: ReadonlySet<string> = new Set([
  'deadline',
  'attemptTimeout',
  'onEvent',
  'breaker',
  'limit',
  'fallback',
  'hedge',
  'saturation',
  'attemptCeiling',
]);

const OBSERVER_MEMBERS = ['callStarted', 'runAttempt', 'event', 'callEnded', 'retired'] as const;

function isEventSink(value: unknown): boolean {
  if (typeof value === 'function') return true;
  if (value === null || typeof value !== 'object') return false;
  const members = OBSERVER_MEMBERS.map((name) => (value as Record<string, unknown>)[name]);
  return (
    members.some((m) => m !== undefined) &&
    members.every((m) => m === undefined || typeof m === 'function')
  );
}
