import type { AttemptContext } from '../execution/attempt-context.js';
import { type CallResult, CallLog } from '../execution/call-result.js';
import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { Limiter } from '../limits/limit-value.js';
import { type CallQuota, isCallQuota } from '../limits/call-quota.js';
import type { HedgeState } from '../hedging/hedge-state.js';
import { Classifier } from '../classification/classifier.js';
import { Breaker } from '../breaker/breaker-value.js';
import { checkDeadlineFits, checkListenerReplaced } from './policy-checks.js';
import type { DependencyLabel } from '../events/call-events.js';
import { type CallContinuation, type Work, execute } from '../execution/executor.js';
import { HeldCall } from '../execution/held-call.js';
import { CallPlan } from '../execution/plan.js';
import {
  type CallEventSink,
  breakerTransitionReporter,
  composeObservers,
  storeStateReporter,
} from '../execution/observer.js';
import { DEFAULT_OPTIONS, type PolicyOptions, mergeOptions } from './policy-options.js';
import {
  type ExecutablePolicy,
  type ResolvedPolicyOptions,
} from '../execution/executable-policy.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import { PolicyConfigError } from '../errors.js';
import { ATTEMPTS_RULE, BOOLEAN_RULE, CONTINUATION_RULES } from '../rules/option-rules.js';
import { checkValue } from '../rules/value-rule.js';
import { Ambient } from '../ambient/ambient-context.js';
import {
  type CheckpointedSource,
  type CheckpointedStream,
  type SegmentRunner,
  isCheckpointedSource,
  runCheckpointed,
} from './checkpointed-stream.js';
import type { ProtectedStream } from '../streams/protected-stream.js';
import type { StreamSource } from '../streams/stream-source.js';
import { type PolicyExplanation, explainPolicy } from './explain.js';
import { MeasuredBackoff } from '../backoff/backoff.js';
import { AttemptCeiling } from '../estimators/attempt-ceiling.js';
import { MeasuredLatency } from '../estimators/measured-latency.js';
import { type MeasuredReadings, measuredReadings } from './measured-readings.js';

/** The measurements of a policy with `Backoff.measured` and no ceiling: its own, per instance. */
const OWN_MEASUREMENTS = AttemptCeiling.default;

/** Per-call options. */
export interface RunOptions {
  /** Cancels the call: no attempt starts after it aborts, a running attempt's signal aborts, no retry. */
  signal?: AbortSignal;
  /**
   * At most this many attempts for this call, an integer in [1, 100] (the `attempts` rule); it can lower the policy's `attempts`,
   * never raise it (1 = this call is not retried, e.g. a request that is not safe to repeat).
   * Default: the policy's.
   */
  attempts?: number;
  /**
   * Carries on a logical call made earlier whose accepted value broke afterwards (a download whose
   * body broke mid-way): its next attempt is a retry of that call — budget, breaker, backoff and the
   * original deadline apply, attempts count on from those already made, and the call is not counted
   * twice. Each run reports its own terminal event, unless `continuing.held` names the held call it
   * carries on (then the logical call reports one). See {@link CallContinuation}.
   */
  continuing?: CallContinuation;
  /**
   * Holds the call's end for its observer when it succeeds: its terminal event (and the end of its
   * span) wait in `hold` until `hold.end()`, so a value still being delivered — a download that may be
   * resumed with `continuing: { …, held: hold }` — is observed as one call. See {@link HeldCall}.
   */
  hold?: HeldCall;
  /**
   * This call is safe to send more than once at the same time (a read, an idempotent write): a
   * policy's `hedge` applies to it. Default: the policy's `repeatable` (false).
   */
  repeatable?: boolean;
  /**
   * A quota the caller keeps for this call's dependency (the resilient fetch's published quota per
   * host), asked at every attempt's admission: while it refuses, the attempt is not started and the
   * call is refused (`QuotaExhausted`, see {@link CallQuota}). Default: none.
   */
  quota?: CallQuota;
  /**
   * What the caller knows of this call that its classifier rules need (the resilient fetch's
   * `CallFacts`: whether the request may be sent again): handed, as it is, to every attempt's
   * classification as `ClassifyContext.facts`; the executor never reads it. An object. Default: none.
   */
  facts?: object;
}

/**
 * State a keyed instance is handed instead of resolving its own from its options: a `PolicyScope`
 * holds each key's breaker and retry-budget state itself, so a new template (a config reload) gives
 * the key a new instance with the new settings over the same state.
 */
export interface PolicyState {
  /** The instance's breaker; `undefined` = resolve from `options.breaker` as usual. */
  readonly breaker?: CircuitBreaker;
  /** The instance's retry-budget state; `undefined` = resolve from `options.budget` as usual. */
  readonly bucket?: RetryBudgetState;
  /**
   * The instance's limiter, kept by its owner across instances; `undefined` = resolve from
   * `options.limit` as usual, and a per-owner one so resolved is written back here.
   */
  limiter?: Limiter;
}

/**
 * An immutable resilience policy: bounds stated as a value, enforced by one flat executor around each
 * call (DESIGN §3.1). Derive variants with {@link Policy.with}; state (the retry budget's bucket)
 * belongs to the instance, so two derived policies never share an automatic budget.
 */
export class Policy implements ExecutablePolicy {
  private resolvedBucket: RetryBudgetState | undefined | null = null;
  private resolvedBreaker: CircuitBreaker | undefined | null = null;
  private resolvedLimiter: Limiter | undefined | null = null;
  private resolvedHedger: HedgeState | undefined | null = null;
  private resolvedMeasurements: MeasuredLatency | undefined | null = null;
  private resolvedPlan: CallPlan | undefined = undefined;

  /**
   * Use `Resilience.default.with(...)` rather than constructing directly.
   * @param options the validated settings
   * @param dependency what this instance stands for in telemetry when it is one key of a keyed
   *   family (a `PolicyScope` with a `label`): the host (per-origin HTTP) or service (per-service gRPC);
   *   carried by its events, never by policies derived from it
   * @param state breaker and retry-budget state this instance uses instead of resolving its own
   *   (a `PolicyScope` key's, kept across template changes); never carried by derived policies
   */
  constructor(
    readonly options: ResolvedPolicyOptions,
    readonly dependency: DependencyLabel | undefined = undefined,
    private readonly state: PolicyState | undefined = undefined,
  ) {}

  /** The policy's name (`''` when unnamed). */
  get name(): string {
    return this.options.name;
  }

  /** The retry budget's bucket for this instance (resolved on first use), or undefined with `RetryBudget.none`. */
  bucket(): RetryBudgetState | undefined {
    if (this.resolvedBucket === null)
      this.resolvedBucket =
        this.state?.bucket ?? this.options.budget.resolve(this, this.options.clock);
    return this.resolvedBucket;
  }

  /**
   * The circuit breaker for this instance (resolved on first use), or undefined without one. Its state
   * changes are reported to this policy's observer as `breakerOpened` (open, isolated),
   * `breakerHalfOpened` (half-open, recovering) and `breakerClosed` events, the state moved to in
   * their `breakerState`.
   */
  breaker(): CircuitBreaker | undefined {
    if (this.resolvedBreaker === null) {
      const o = this.options;
      // First use of this instance (every run asks for its breaker): judge the finished shape once.
      checkDeadlineFits(o);
      this.resolvedBreaker =
        this.state?.breaker ??
        o.breaker?.resolve(
          this,
          o.clock,
          o.random,
          breakerTransitionReporter(() => this),
        );
    }
    return this.resolvedBreaker;
  }

  /**
   * The limiter for this instance (a concurrency or a rate limiter, resolved on first use), or
   * undefined without a `limit`. An adaptive limit learns nothing while the policy's `saturation`
   * says the event loop is saturated.
   */
  limiter(): Limiter | undefined {
    if (this.resolvedLimiter === null) {
      const o = this.options;
      const state = this.state;
      const saturation = o.saturation;
      const limiter =
        state?.limiter ??
        o.limit?.resolve(
          this,
          o.clock,
          saturation === undefined ? undefined : () => saturation.saturated,
          { name: sharedKey(this), onStoreState: storeStateReporter(() => this) },
        );
      // A scope key's own limiter outlives this instance (new settings, an eviction mid-call).
      if (state !== undefined && o.limit?.kind === 'perOwner') state.limiter = limiter;
      this.resolvedLimiter = limiter;
    }
    return this.resolvedLimiter;
  }

  /** What this instance's hedge has learnt (resolved on first use), or undefined without a `hedge`. */
  hedger(): HedgeState | undefined {
    if (this.resolvedHedger === null) this.resolvedHedger = this.options.hedge?.resolve(this);
    return this.resolvedHedger;
  }

  /**
   * What this instance measures of its dependency for the measured terms (resolved on first use):
   * the attempt ceiling's state (pinned by the config layer, else this instance's own), which
   * `Backoff.measured` reads too; `undefined` when neither is configured or `adaptive` is false.
   */
  measurements(): MeasuredLatency | undefined {
    if (this.resolvedMeasurements === null) {
      const o = this.options;
      const backoff = o.backoff instanceof MeasuredBackoff ? o.backoff : undefined;
      this.resolvedMeasurements = !o.adaptive
        ? undefined
        : (o.attemptCeiling?.resolve(this) ??
          (backoff === undefined
            ? undefined
            : backoff.state instanceof MeasuredLatency
              ? backoff.state
              : OWN_MEASUREMENTS.resolve(this)));
    }
    return this.resolvedMeasurements;
  }

  /**
   * What the measured terms read now (DESIGN §3.8), each `undefined` until it is configured and warm
   * (see {@link MeasuredReadings}). Reading it resolves the hedge and the measurements, as a first
   * call would.
   */
  get measured(): MeasuredReadings {
    return measuredReadings(this);
  }

  /** What the executor reads of this instance once, on its first call (settings and resolved state). */
  private plan(): CallPlan {
    return (this.resolvedPlan ??= new CallPlan(this));
  }

  /**
   * A new policy with `changes` applied over this one's settings.
   * @throws PolicyConfigError naming the field, the value and the rule (attempts < 1, negative durations,
   *   unknown keys, values of the wrong kind).
   * Replacing listeners the policy had (`onEvent` set to a new listener) is reported once per policy
   * name as a run-time warning (`ResilienceWarningCodes.replacedListeners`, see `setWarningSink`);
   * `onEvent: undefined` removes them without a warning.
   */
  with(changes: PolicyOptions): Policy {
    const policy = new Policy(mergeOptions(this.options, changes));
    checkListenerReplaced(this.options, changes);
    return policy;
  }

  /**
   * A new policy that also tells `listener` everything (after whatever is attached already): a plain
   * event listener, or a {@link CallObserver} (call start and end, attempts run inside it). What is
   * attached stays attached: telemetry and logging keep working (unlike `with({ onEvent })`, which
   * replaces them).
   * @throws PolicyConfigError (field `onEvent`) when `listener` is neither a function nor an observer
   */
  withListener(listener: CallEventSink): Policy {
    const added = mergeOptions(this.options, { onEvent: listener }); // validates it, naming the field
    const previous = this.options.onEvent;
    if (previous === undefined) return new Policy(added);
    return new Policy(
      mergeOptions(this.options, { onEvent: composeObservers(previous, added.onEvent!) }),
    );
  }

  /**
   * This policy's configuration beside its live readings (budget level, breaker state and trip
   * readings, limit, hedge threshold), each term marked `warm`, `cold` or `not configured`;
   * `toString()` prints it. Reading the budget, breaker and limiter resolves them, as a first call would.
   */
  explain(): PolicyExplanation {
    return explainPolicy(this);
  }

  /**
   * Runs `work` under this policy.
   *
   * When the work returns a stream (an AsyncIterable — async generator, Node readable stream, fetch
   * body — or an Observable), the attempt lasts until the stream's first element and the promise
   * resolves then with a {@link ProtectedStream} (DESIGN §3.10): failures before the first element
   * are retried like any attempt's, later ones are the consumer's; `attemptTimeout` bounds each
   * silence while the consumer waits (`AttemptStalledError`); stopping early ends the source. Given
   * `{ start, checkpoint, source }` (a {@link CheckpointedSource}) instead of a function, a
   * mid-stream failure worth retrying re-opens the source at the last checkpoint, at most
   * `restarts` times, and the promise resolves with a {@link CheckpointedStream}. See docs/streams.md.
   * @param source the checkpointed stream: where it starts, the position after each element, how to open it
   * @returns the stream, once its first element arrived
   * @throws the final attempt's error; `CallRejectedError` when the retry budget refuses a retry;
   *   `DeadlineExceededError` when the deadline passes; the signal's reason when the caller aborts;
   *   `PolicyConfigError` (field `attempts`) when `options.attempts` is not an integer in [1, 100],
   *   (field `hedge`) when a hedged policy is given a stream, (fields `source`, `checkpoint`,
   *   `restarts`) for a bad checkpointed source.
   */
  run<T, C>(source: CheckpointedSource<T, C>, options?: RunOptions): Promise<CheckpointedStream<T>>;
  /**
   * Runs `work` under this policy: resolves with the value of the first Ok attempt (or the last
   * classified value once retries are over), or with a {@link ProtectedStream} at the first element
   * when the work returns a stream (see the overload above).
   * @param work called once per attempt with `{ signal, attempt, bound, remaining }`
   * @throws as the overload above
   */
  run<T>(
    work: (context: AttemptContext) => T | PromiseLike<T>,
    options?: RunOptions,
  ): Promise<Streamed<T>>;
  run<T>(
    work: ((context: AttemptContext) => T | PromiseLike<T>) | CheckpointedSource<unknown, unknown>,
    options?: RunOptions,
  ): Promise<unknown> {
    if (options !== undefined) checkRunOptions(options);
    if (typeof work !== 'function') return this.runCheckpointed(work, options);
    return execute(this.plan(), work as Work<T>, options, undefined);
  }

  /**
   * Like {@link Policy.run} but never rejects for the call's outcome: resolves to
   * `{ ok, value, error, reason, attempts, duration }`. Rejects only for invalid `options` (as `run` throws).
   */
  async tryRun<T>(
    work: (context: AttemptContext) => T | PromiseLike<T>,
    options?: RunOptions,
  ): Promise<CallResult<Streamed<T>>> {
    if (options !== undefined) checkRunOptions(options);
    const log = new CallLog();
    try {
      const value = (await execute(this.plan(), work as Work<T>, options, log)) as Streamed<T>;
      return {
        ok: log.reason === 'succeeded',
        value,
        error: undefined,
        reason: log.reason,
        attempts: log.attempts,
        duration: log.duration,
        fallback: log.fallback,
      };
    } catch (error) {
      return {
        ok: false,
        value: undefined,
        error,
        reason: log.reason,
        attempts: log.attempts,
        duration: log.duration,
        fallback: log.fallback,
      };
    }
  }

  private runCheckpointed(spec: unknown, options: RunOptions | undefined): Promise<unknown> {
    if (!isCheckpointedSource(spec))
      return Promise.reject(
        new PolicyConfigError(
          'work',
          spec,
          'must be a function (ctx) => value, or { start, checkpoint, source } for a checkpointed stream',
        ),
      );
    if (options?.continuing !== undefined || options?.hold !== undefined) {
      return Promise.reject(
        new PolicyConfigError(
          options.continuing !== undefined ? 'continuing' : 'hold',
          options.continuing ?? options.hold,
          'is not available for a checkpointed stream (it continues and holds its own call)',
        ),
      );
    }
    const run: SegmentRunner = (work, segment) =>
      execute(this.plan(), work as Work<unknown>, segment, undefined);
    return runCheckpointed(this, spec, run, options ?? {});
  }
}

/**
 * What `policy.run` resolves with for work returning `T`: a {@link ProtectedStream} of its elements
 * when `T` is a stream (an AsyncIterable or an Observable), else `T` itself.
 */
export type Streamed<T> = 0 extends 1 & T
  ? T
  : T extends ProtectedStream<unknown> | CheckpointedStream<unknown>
    ? T
    : T extends AsyncIterable<infer E>
      ? ProtectedStream<E>
      : T extends { subscribe(next?: ((value: infer E) => void) | null, ...rest: never[]): unknown }
        ? ProtectedStream<E>
        : T extends StreamSource<infer E>
          ? ProtectedStream<E>
          : T;

/** Checks a call's options before it starts (`attempts`, `continuing`, `hold`, `repeatable`, `quota`, `facts`). */
function checkRunOptions(options: RunOptions): void {
  const attempts = options.attempts;
  if (attempts !== undefined) checkValue(ATTEMPTS_RULE, 'attempts', attempts);
  const continuing = options.continuing;
  if (continuing !== undefined) checkContinuation(continuing);
  const hold = options.hold;
  if (hold !== undefined && !(hold instanceof HeldCall))
    throw new PolicyConfigError('hold', hold, 'must be a HeldCall (new HeldCall())');
  const repeatable = options.repeatable;
  if (repeatable !== undefined) checkValue(BOOLEAN_RULE, 'repeatable', repeatable);
  const quota = options.quota;
  if (quota !== undefined && !isCallQuota(quota))
    throw new PolicyConfigError('quota', quota, 'must be { refusal(now), spend() } (a CallQuota)');
  const facts = options.facts;
  if (facts !== undefined && (typeof facts !== 'object' || facts === null))
    throw new PolicyConfigError(
      'facts',
      facts,
      "must be an object (the call's facts for its classifier)",
    );
}

function checkContinuation(continuing: CallContinuation): void {
  if (typeof continuing !== 'object' || continuing === null)
    throw new PolicyConfigError(
      'continuing',
      continuing,
      'must be { attempts, error, deadlineAt }',
    );
  checkValue(CONTINUATION_RULES.attempts, 'continuing.attempts', continuing.attempts);
  checkValue(CONTINUATION_RULES.deadlineAt, 'continuing.deadlineAt', continuing.deadlineAt);
  const held = continuing.held;
  if (held !== undefined && !(held instanceof HeldCall))
    throw new PolicyConfigError(
      'continuing.held',
      held,
      'must be the HeldCall the carried call was run with (RunOptions.hold)',
    );
}

/** Ready-made policies (DESIGN §3.1), and the single-shot scope. */
export const Resilience = {
  /** 3 attempts, exponential backoff with full jitter (100 ms base, 30 s cap), automatic retry budget, no deadline. */
  default: new Policy(DEFAULT_OPTIONS),
  /**
   * `default` plus a 30 s deadline on the whole call, a circuit breaker with the defaults of DESIGN
   * §3.6 and `Classifier.http` (a 404 is an answer, a 503 with `Retry-After` is pushback).
   */
  http: new Policy(
    mergeOptions(DEFAULT_OPTIONS, {
      deadline: 30_000,
      breaker: Breaker.default,
      classifier: Classifier.http,
      attemptCeiling: AttemptCeiling.default,
    }),
  ),
  /**
   * Runs `fn` in a single-shot scope (DESIGN §3.9): every policy call made inside it, to any depth
   * and through its awaits, makes one attempt — no retries — for work an outer layer already
   * retries. The breaker, budget deposits and deadlines still apply. Returns what `fn` returns.
   * Same as `Ambient.singleShot`.
   */
  singleShot: Ambient.singleShot,
  /**
   * Conservative defaults for services with a wide fan-out: 2 attempts (one retry), the automatic
   * retry budget, and a breaker floored at a 50 % failure ratio (every breaker's default
   * `failureRateFloor`; `minimumErrorRate: 0.5` floors the relative trip too if it is turned on; the
   * shortest tripping run raised to 20), with `Classifier.http`. Not retrying a non-idempotent call
   * whose outcome is ambiguous is the transports' rule, for every preset: the resilient `fetch`
   * retries POST/PATCH only after a definitive refusal (429/503) or a connection never opened
   * unless marked repeatable, and the gRPC interceptor retries only methods marked repeatable.
   */
  conservative: new Policy(
    // streakSignificance given: 20 is the shortest run, measured like the default's (a bare
    // consecutiveFailures would be taken literally).
    mergeOptions(DEFAULT_OPTIONS, {
      attempts: 2,
      breaker: Breaker.with({
        minimumErrorRate: 0.5,
        consecutiveFailures: 20,
        streakSignificance: 1e-8,
      }),
      classifier: Classifier.http,
    }),
  ),
} as const;

/**
 * The key of a shared rate limit that names none: the policy's name, and for a keyed instance its
 * host or service (each host has its own fleet bucket, as it has its own local one); `undefined` for
 * an unnamed policy.
 */
function sharedKey(policy: Policy): string | undefined {
  if (policy.name === '') return undefined;
  const dependency = policy.dependency;
  const label = dependency?.host ?? dependency?.service;
  return label === undefined ? policy.name : `${policy.name}:${label}`;
}
