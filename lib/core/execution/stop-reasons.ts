import type { StopReason } from '../events/call-events.js';

// Failure path only: a call that rejects records why it stopped, keyed by the error it rejects with.
const reasons = new WeakMap<object, StopReason>();

/** Records that a call stopped for `reason` with `error` (objects and functions only). @internal */
export function recordStop(error: unknown, reason: StopReason): void {
  if (error !== null && (typeof error === 'object' || typeof error === 'function'))
    reasons.set(error, reason);
}

/**
 * Why the last policy call that rejected with `error` stopped (DESIGN §3.12), e.g. `attemptsExhausted`
 * when its attempts ran out on the work's own error, `permanent` when a verdict ended it. `undefined`
 * for a value no call rejected with, for primitives (a thrown string cannot carry it), and for calls of
 * a policy that adds nothing (one attempt, no budget, breaker, bound or listener: the work's own
 * promise is the call's, nothing classifies it). When calls nest, the outermost that rejected last
 * decides. The exception filter's opt-in 502 reads it.
 * @param error what `policy.run` rejected with
 */
export function stopReasonOf(error: unknown): StopReason | undefined {
  return error !== null && (typeof error === 'object' || typeof error === 'function')
    ? reasons.get(error)
    : undefined;
}
