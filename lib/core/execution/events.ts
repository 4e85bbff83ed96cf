import type { BreakerState } from '../breaker/breaker-state.js';
import type { VerdictKind } from '../classification/verdict.js';

/** Why a call ended (DESIGN §3.12). */
export type StopReason =
  | 'succeeded'
  | 'attemptsExhausted'
  | 'permanent'
  | 'deadlineExceeded'
  | 'budgetExhausted'
  | 'dependencyUnavailable'
  | 'limited'
  | 'cancelled'
  | 'draining';

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
  | 'rejectedByQuota'
  | 'streamResumed'
  | 'draining';

/** A listener for call events; an error it throws is swallowed. */
export type CallEventListener = (event: CallEvent) => void;

/**
 * One thing that happened in a call, as a plain object of fixed shape (DESIGN §3.12).
 * - `attempt`: an attempt ended (`verdict`, `duration` of that attempt).
 * - `retrying`: a retry is scheduled after attempt `attempt` (`delay` ms of backoff).
 * - `succeeded` / `failed` / `rejected`: the call ended (`isTerminal`, `reason`, `duration` of the call).
 * Built only when the policy has a listener.
 */
export class CallEvent {
  constructor(
    /** What happened. */
    readonly kind: CallEventKind,
    /** The policy's name (`''` when unnamed). */
    readonly policy: string,
    /** 1-based attempt number the event is about (0 when not about an attempt). */
    readonly attempt: number,
    /** The attempt's verdict, when the event is about a finished attempt. */
    readonly verdict: VerdictKind | undefined,
    /** `name` of the error involved, if any. */
    readonly error: string | undefined,
    /** Milliseconds: the attempt's duration, or the call's for terminal events. */
    readonly duration: number,
    /** Milliseconds of backoff before the next attempt (`retrying`), else 0. */
    readonly delay: number,
    /** Why the call stopped, on terminal events. */
    readonly reason: StopReason | undefined,
    /** True on the one event that ends a call. */
    readonly isTerminal: boolean,
  ) {}

  /**
   * Human form, e.g. `[payments] Retrying #1 Transient (102ms) +200ms` (DESIGN §3.12); the stop reason
   * follows on terminal events and the error's name, when there is one, comes last:
   * `[payments] Failed #3 Transient (310ms) attemptsExhausted TimeoutError`.
   */
  toString(): string {
    const label = this.kind.charAt(0).toUpperCase() + this.kind.slice(1);
    let text = `[${this.policy}] ${label}`;
    if (this.attempt > 0) text += ` #${this.attempt}`;
    if (this.verdict !== undefined && this.kind !== 'succeeded') text += ` ${this.verdict}`;
    text += ` (${Math.round(this.duration)}ms)`;
    if (this.kind === 'retrying') text += ` +${Math.round(this.delay)}ms`;
    if (this.isTerminal && this.reason !== undefined && this.reason !== 'succeeded') text += ` ${this.reason}`;
    if (this.error !== undefined) text += ` ${this.error}`;
    return text;
  }
}

/**
 * The event a breaker state change is reported as: `breakerOpened` (open, isolated; `delay` = the break
 * being served, ms), `breakerHalfOpened` (half-open, recovering) or `breakerClosed`.
 */
export function breakerTransitionEvent(policy: string, to: BreakerState, breakMs: number): CallEvent {
  const kind: CallEventKind = to === 'closed' ? 'breakerClosed' : to === 'open' || to === 'isolated' ? 'breakerOpened' : 'breakerHalfOpened';
  return new CallEvent(kind, policy, 0, undefined, undefined, 0, to === 'open' ? breakMs : 0, undefined, false);
}
