import type { BreakerState, BreakerTrip, BreakerTripCause } from '../breaker/breaker-state.js';
import type { VerdictKind } from '../classification/verdict.js';

/**
 * Why a call ended (DESIGN §3.12). `notRepeatable`: the last attempt failed in a way worth retrying,
 * attempts were left, but its verdict was final because the request is not safe to send again (a
 * POST or PATCH without an idempotency key after a reset, a timeout or a 5xx; `Verdict.final`).
 */
export type StopReason =
  | 'succeeded'
  | 'attemptsExhausted'
  | 'notRepeatable'
  | 'permanent'
  | 'deadlineExceeded'
  | 'budgetExhausted'
  | 'dependencyUnavailable'
  | 'limited'
  | 'cancelled'
  | 'draining';

/**
 * What the policy's fallback made of a call that stopped without a value of its own (DESIGN §3.12):
 * `served` — it answered, its value is the call's; `failed` — it threw, the call rejects with its error.
 */
export type FallbackOutcome = 'served' | 'failed';

/** Kinds of {@link CallEvent}. `succeeded`, `failed` and `rejected` are terminal. */
export type CallEventKind =
  | 'attempt'
  | 'retrying'
  | 'succeeded'
  | 'failed'
  | 'rejected'
  | 'hedged'
  | 'breakerOpened'
  | 'breakerHalfOpened'
  | 'breakerClosed'
  | 'nestedRetry'
  | 'saturationDetected'
  | 'limiterDegraded'
  | 'limiterRecovered'
  | 'rejectedByQuota'
  | 'streamResumed'
  | 'draining';

/**
 * What a keyed policy instance is keyed by, as telemetry reports it (DESIGN §7: the dependency's host
 * or service, never a URL path or an id): `host` for the HTTP client's per-origin policies, `service`
 * for the gRPC interceptor's per-service ones. A bounded set (the scope's `maximumKeys`).
 */
export interface DependencyLabel {
  /** The dependency's host (`host[:port]` of an origin). */
  readonly host?: string;
  /** The dependency's service (`package.Service`). */
  readonly service?: string;
}

/** A listener for call events; an error it throws is swallowed. */
export type CallEventListener = (event: CallEvent) => void;

/** The fields of a {@link CallEvent} by name; every one but `kind` and `policy` may be left out. */
export interface CallEventInit {
  readonly kind: CallEventKind;
  readonly policy: string;
  /** Default 0 (not about an attempt). */
  readonly attempt?: number;
  readonly verdict?: VerdictKind;
  /**
   * The error's `name` (`typeof` for a thrown non-Error); on a `breakerOpened` event, the last
   * failure's cause (see {@link CallEvent.error}).
   */
  readonly error?: string;
  /** Milliseconds; default 0. */
  readonly duration?: number;
  /** Milliseconds; default 0. */
  readonly delay?: number;
  readonly reason?: StopReason;
  /** Default false. */
  readonly isTerminal?: boolean;
  /** The keyed instance's label; default none. */
  readonly dependency?: DependencyLabel;
  /** On a terminal event of a call the policy's fallback ran for: what it made of it. Default none. */
  readonly fallback?: FallbackOutcome;
  /** On a terminal event: a hedge answered first. Default false. */
  readonly hedgeWon?: boolean;
  /** On a `breakerOpened` event: what kind of evidence opened it. Default none. */
  readonly trip?: BreakerTripCause;
  /** On a breaker event: the state the breaker moved to. Default none. */
  readonly breakerState?: BreakerState;
}

/**
 * One thing that happened in a call, as a plain object of fixed shape (DESIGN §3.12).
 * - `attempt`: an attempt ended (`verdict`, `duration` of that attempt).
 * - `retrying`: a retry is scheduled after attempt `attempt` (`delay` ms of backoff).
 * - `hedged`: attempt `attempt` started beside a slower one (`duration`: how long that one had run,
 *   ms; `delay`: the threshold it outlasted, ms).
 * - `succeeded` / `failed` / `rejected`: the call ended (`isTerminal`, `reason`, `duration` of the call).
 * Built only when the policy has a listener.
 */
export class CallEvent {
  /** What happened. */
  readonly kind: CallEventKind;
  /** The policy's name (`''` when unnamed). */
  readonly policy: string;
  /** 1-based attempt number the event is about (0 when not about an attempt). */
  readonly attempt: number;
  /** The attempt's verdict, when the event is about a finished attempt. */
  readonly verdict: VerdictKind | undefined;
  /**
   * `name` of the error involved, if any. On a `breakerOpened` event with a trip of failures: the last
   * Transient attempt's cause as the exception filter names a dependency's failure — the socket code
   * the error or its cause carries (`ECONNREFUSED`; undici's `TypeError: fetch failed` carries it on
   * `cause`), the status of an attached `response` (`HTTP 503`), a gRPC status's name
   * (`UNAVAILABLE`), else the error's name.
   */
  readonly error: string | undefined;
  /** Milliseconds: the attempt's duration, or the call's for terminal events. */
  readonly duration: number;
  /** Milliseconds of backoff before the next attempt (`retrying`), else 0. */
  readonly delay: number;
  /** Why the call stopped, on terminal events. */
  readonly reason: StopReason | undefined;
  /** True on the one event that ends a call. */
  readonly isTerminal: boolean;
  /** The host or service of a keyed policy instance (per-origin HTTP, per-service gRPC), else `undefined`. */
  readonly dependency: DependencyLabel | undefined;
  /**
   * On the terminal event of a call the policy's fallback ran for: `served` when it answered (`error`
   * names the call's own error), `failed` when it threw (`error` names the fallback's). `kind` and
   * `reason` still say how the call itself ended (`rejected`/`limited`, `failed`/`attemptsExhausted`).
   * `undefined` on every other event.
   */
  readonly fallback: FallbackOutcome | undefined;
  /** True on the terminal event of a call a hedge answered (an attempt started beside a slower one), else false. */
  readonly hedgeWon: boolean;
  /**
   * On a `breakerOpened` event with a trip, what opened the breaker: `failures` (a run of Transient
   * attempts), `slow` (slow attempts), `probe` / `slowProbe` (a half-open probe failed / answered
   * slowly: the breaker re-opened), `recovery` (an attempt failed while recovering: re-opened). `undefined` on every other
   * event and on an opening without a trip (`isolate()`).
   */
  readonly trip: BreakerTripCause | undefined;
  /**
   * On a breaker event, the state the breaker moved to: `open` or `isolated` on a `breakerOpened`,
   * `halfOpen` (probing) or `recovering` (admitting a growing share of attempts) on a
   * `breakerHalfOpened`, `closed` on a `breakerClosed`. `undefined` on every other event.
   */
  readonly breakerState: BreakerState | undefined;

  /**
   * An event from its fields by name; what is left out takes its default (see {@link CallEventInit}).
   * @param dependency the keyed instance's label; default `init.dependency`
   */
  constructor(init: CallEventInit, dependency: DependencyLabel | undefined = init.dependency) {
    this.kind = init.kind;
    this.policy = init.policy;
    this.attempt = init.attempt ?? 0;
    this.verdict = init.verdict;
    this.error = init.error;
    this.duration = init.duration ?? 0;
    this.delay = init.delay ?? 0;
    this.reason = init.reason;
    this.isTerminal = init.isTerminal ?? false;
    this.dependency = dependency;
    this.fallback = init.fallback;
    this.hedgeWon = init.hedgeWon ?? false;
    this.trip = init.trip;
    this.breakerState = init.breakerState;
  }

  /**
   * An event from its fields by name (what listeners' tests build events with), the same as
   * `new CallEvent(init, dependency)`.
   */
  static of(
    init: CallEventInit,
    dependency: DependencyLabel | undefined = init.dependency,
  ): CallEvent {
    return new CallEvent(init, dependency);
  }

  /**
   * Human form, e.g. `[payments] Retrying #1 Transient (102ms) +200ms` (DESIGN §3.12); the stop reason
   * follows on terminal events, then the error's name when there is one, then what a fallback made of
   * the call: `[payments] Failed #3 Transient (310ms) attemptsExhausted TimeoutError (fallback served)`.
   */
  toString(): string {
    const label = this.kind.charAt(0).toUpperCase() + this.kind.slice(1);
    let text = `[${this.policy}] ${label}`;
    if (this.attempt > 0) text += ` #${this.attempt}`;
    if (this.verdict !== undefined && this.kind !== 'succeeded') text += ` ${this.verdict}`;
    text += ` (${Math.round(this.duration)}ms)`;
    if (this.kind === 'retrying') text += ` +${Math.round(this.delay)}ms`;
    if (this.kind === 'hedged') text += ` after ${Math.round(this.delay)}ms`;
    if (this.isTerminal && this.reason !== undefined && this.reason !== 'succeeded')
      text += ` ${this.reason}`;
    if (this.error !== undefined) text += ` ${this.error}`;
    if (this.fallback !== undefined) text += ` (fallback ${this.fallback})`;
    return text;
  }
}

/**
 * The event a breaker state change is reported as: `breakerOpened` (open, isolated; `delay` = the break
 * being served, ms), `breakerHalfOpened` (half-open, recovering) or `breakerClosed`, with the state
 * moved to as `breakerState`. A `breakerOpened` with a trip carries what the breaker opened on:
 * `attempt` = the failed (or, with verdict `Ok`, slow) attempts, `duration` = the span they came in
 * (ms; see {@link BreakerTrip}), `error` = `lastError`, the last Transient attempt's failure named as
 * {@link CallEvent.error} says (none on a trip of slowness), `trip` = its cause.
 */
export function breakerTransitionEvent(
  policy: string,
  to: BreakerState,
  breakMs: number,
  dependency?: DependencyLabel,
  trip?: BreakerTrip,
  lastError?: string,
): CallEvent {
  const kind: CallEventKind =
    to === 'closed'
      ? 'breakerClosed'
      : to === 'open' || to === 'isolated'
        ? 'breakerOpened'
        : 'breakerHalfOpened';
  const delay = to === 'open' ? breakMs : 0;
  if (trip === undefined)
    return CallEvent.of({ kind, policy, delay, dependency, breakerState: to });
  return CallEvent.of({
    kind,
    policy,
    delay,
    dependency,
    breakerState: to,
    attempt: trip.count,
    duration: trip.spanMs,
    verdict: trip.cause === 'slow' || trip.cause === 'slowProbe' ? 'Ok' : 'Transient',
    error: lastError,
    trip: trip.cause,
  });
}
