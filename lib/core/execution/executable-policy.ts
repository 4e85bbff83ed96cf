import type { Backoff } from '../backoff/backoff.js';
import type { Breaker } from '../breaker/breaker-value.js';
import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { RetryBudget } from '../budget/retry-budget.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import type { Classifier } from '../classification/classifier.js';
import type { CallEvent, CallEventListener, DependencyLabel } from '../events/call-events.js';
import type { Fallback } from '../fallback/fallback.js';
import type { AttemptCeiling } from '../estimators/attempt-ceiling.js';
import type { MeasuredLatency } from '../estimators/measured-latency.js';
import type { Hedge } from '../hedging/hedge-value.js';
import type { HedgeState } from '../hedging/hedge-state.js';
import type { Limiter } from '../limits/limit-value.js';
import type { Limit } from '../limits/limit-value.js';
import type { Saturation } from '../limits/saturation.js';
import type { Drain } from '../signals/drain.js';
import type { Clock } from '../time/clock.js';
import type { AttemptContext } from './attempt-context.js';

// What the executor runs: a policy instance's resolved settings and state, and the observer it
// tells. The policy layer above (policy-options.ts, policy.ts) builds these; execution reads them.

/**
 * The one telemetry seam (DESIGN §7; after Polly's `TelemetryListener` and resilience4j's event
 * publisher): what a policy tells whoever observes it. For each logical call, in this order:
 * `callStarted` once, then `event` for each attempt, retry and refusal, then the terminal event
 * (`succeeded` / `failed` / `rejected`) and `callEnded` once. Breaker transitions (and refusals a
 * transport makes outside the executor, such as a quota) come through `event` with no call state.
 *
 * Every member is optional; the executor calls only what is there and swallows what they throw (an
 * observer never changes a call's outcome). The OpenTelemetry listener, the logging listener and
 * plain event listeners (`withListener(fn)`) are all observers; attach with `policy.withListener`.
 *
 * @typeParam S the per-call state `callStarted` returns (a span, the attribute set of the call)
 */
export interface CallObserver<S = unknown> {
  /**
   * A logical call of `policy` starts (the instance running it: its name, breaker, bucket, and the
   * `dependency` a keyed instance carries). Returns the state handed back to every later callback
   * of this call (`undefined` for none).
   */
  callStarted?(policy: ExecutablePolicy): S;
  /**
   * Runs one attempt's work; must call `work(context)` once, synchronously, and return what it
   * returns — e.g. inside the call span's context, so that spans the work starts are its children.
   */
  runAttempt?<T>(
    state: S,
    work: (context: AttemptContext) => T | PromiseLike<T>,
    context: AttemptContext,
  ): T | PromiseLike<T>;
  /** One event: of this call (with its state) or of the policy (breaker transitions: state `undefined`). */
  event?(event: CallEvent, state: S | undefined): void;
  /** The call ended: after its terminal event, once per started call. */
  callEnded?(state: S, terminal: CallEvent): void;
  /**
   * `policy`, an instance this observer may have seen, will run no more calls: a keyed instance
   * evicted from (or deleted from) its `PolicyScope` — a host the HTTP client's `maximumHosts` LRU
   * let go, a service of the gRPC interceptor. Drop what is kept for it (its gauge series), so what
   * an observer holds stays bounded by the scope's keys. Calls already running under it still end.
   */
  retired?(policy: ExecutablePolicy): void;
}

/** What `onEvent` and `withListener` accept: a plain event listener or an observer. */
// An observer keeps its own per-call context type; a sink of any of them is accepted.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CallEventSink = CallEventListener | CallObserver<any>;

/** A plain listener as an observer (events only), or the observer itself. */
export function toObserver(sink: CallEventSink): CallObserver {
  return typeof sink === 'function' ? { event: sink } : sink;
}

/** What the executor (and a {@link CallObserver}) sees of a policy instance: its settings and its resolved state. */
export interface ExecutablePolicy {
  /** The policy's name (`''` when unnamed). */
  readonly name: string;
  /** The host or service a keyed instance stands for (per-origin HTTP, per-service gRPC), else `undefined`. */
  readonly dependency: DependencyLabel | undefined;
  readonly options: ResolvedPolicyOptions;
  /** The retry budget's bucket for this policy instance, or undefined when off. */
  bucket(): RetryBudgetState | undefined;
  /** The circuit breaker for this policy instance, or undefined when off. */
  breaker(): CircuitBreaker | undefined;
  /** The limiter (concurrency or rate) for this policy instance, or undefined when off. */
  limiter(): Limiter | undefined;
  /** What this policy instance's hedge has learnt, or undefined without a `hedge`. */
  hedger(): HedgeState | undefined;
  /**
   * What this policy instance measures of its dependency for the measured terms (`attemptCeiling`,
   * `Backoff.measured`), or undefined when it has none of them or `adaptive` is false.
   */
  measurements(): MeasuredLatency | undefined;
}

/** A policy's complete, validated settings. */
export interface ResolvedPolicyOptions {
  readonly name: string;
  readonly attempts: number;
  readonly backoff: Backoff;
  readonly budget: RetryBudget;
  readonly breaker: Breaker | undefined;
  readonly deadline: number | undefined;
  readonly attemptTimeout: number | undefined;
  /** How many times a checkpointed stream may be re-opened (see `PolicyOptions.restarts`). */
  readonly restarts: number;
  readonly useAmbientDeadline: boolean;
  readonly useAmbientCriticality: boolean;
  readonly drain: Drain | undefined;
  readonly classifier: Classifier;
  /** The listeners and observers attached, as one observer (a plain listener is wrapped as one). */
  readonly onEvent: CallObserver | undefined;
  readonly limit: Limit | undefined;
  readonly hedge: Hedge | undefined;
  readonly repeatable: boolean;
  readonly fallback: Fallback | undefined;
  readonly saturation: Saturation | undefined;
  /** Tightens the attempt bound to a multiple of measured latency (see `PolicyOptions.attemptCeiling`). */
  readonly attemptCeiling: AttemptCeiling | undefined;
  /** Whether the measured terms are in force (see `PolicyOptions.adaptive`). */
  readonly adaptive: boolean;
  readonly clock: Clock;
  readonly random: () => number;
}
