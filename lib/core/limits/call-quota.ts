/**
 * A quota the caller keeps outside the policy (the resilient fetch's published quota per host,
 * DESIGN §5), asked at every attempt's admission like the policy's own guards: while `refusal`
 * returns a wait the attempt is not started and the call is refused on the one refusal path — the
 * 100 ms guarded pause, then `CallRejectedError { reason: 'QuotaExhausted', retryAfter }` with the
 * wait as read after the pause (1 ms when the window reset during the pause: ask again at once, as a
 * breaker's slot freed during the pause answers), a `rejectedByQuota` event, stop reason `limited`. An admitted attempt is counted with `spend`.
 * Give it to one call as `RunOptions.quota`.
 */
export interface CallQuota {
  /**
   * Ms until an attempt may go, or `undefined` when it may go now.
   * @param now a reading of the policy's clock, ms
   */
  refusal(now: number): number | undefined;
  /** Counts an attempt that was admitted (it will be sent). */
  spend(): void;
}

/** Whether `value` has a quota's two methods. */
export function isCallQuota(value: unknown): value is CallQuota {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CallQuota).refusal === 'function' &&
    typeof (value as CallQuota).spend === 'function'
  );
}
