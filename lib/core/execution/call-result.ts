import type { FallbackOutcome, StopReason } from '../events/call-events.js';
import type { VerdictKind } from '../classification/verdict.js';

/** One attempt of a call, as `tryRun` reports it. */
export interface AttemptRecord {
  /** 1-based attempt number. */
  readonly attempt: number;
  /** How the attempt was classified. */
  readonly verdict: VerdictKind;
  /** How long the attempt ran, in ms. */
  readonly duration: number;
  /** What the attempt threw, if it threw. */
  readonly error: unknown;
  /** Backoff waited after this attempt before the next one, in ms (0 for the last). */
  delay: number;
}

/** What `policy.tryRun` resolves to; it never rejects. */
export interface CallResult<T> {
  /** True when the call ended with an Ok verdict. */
  readonly ok: boolean;
  /** The value returned by the last attempt, if it returned one. */
  readonly value: T | undefined;
  /** The error the call ended with (what `run` would reject with), if any. */
  readonly error: unknown;
  /** Why the call stopped. */
  readonly reason: StopReason;
  /** Every attempt made, in order. */
  readonly attempts: readonly AttemptRecord[];
  /** Duration of the whole call in ms, by the policy's clock. */
  readonly duration: number;
  /**
   * What the policy's fallback made of the call, when it ran: `served` (`value` is the fallback's) or
   * `failed` (`error` is the fallback's, the call's own as its `cause`); `ok` stays false and `reason`
   * says why the call stopped without its own value. `undefined` when no fallback ran.
   */
  readonly fallback: FallbackOutcome | undefined;
}

/** Mutable bookkeeping for one call, allocated only when the caller wants a result (tryRun). */
export class CallLog {
  reason: StopReason = 'succeeded';
  readonly attempts: AttemptRecord[] = [];
  duration = 0;
  fallback: FallbackOutcome | undefined = undefined;
}
