import { subscribeAbort, unsubscribeAbort } from '../core/abort-link.js';
import type { Clock } from '../core/clock.js';

/**
 * Waits `ms` milliseconds on `clock`, the way every scripted delay in the testing kit waits.
 *
 * - `ms <= 0` (or NaN) resolves without setting a timer (and without reading the signal).
 * - An already-aborted `signal` rejects at once with its reason and sets no timer.
 * - When `signal` aborts during the wait, the timer is cleared and the promise rejects with
 *   `signal.reason` at once. The listener put on the signal is removed when the wait ends either way.
 *
 * @param clock the clock whose timer paces the wait (a `FakeClock` in tests)
 * @param ms how long to wait, in milliseconds
 * @param signal optional cancellation
 * @internal shared by `Sequence`, `ScriptedFetch` and `Chaos`; not part of the public kit.
 */
export function clockDelay(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (!(ms > 0)) return Promise.resolve();
  if (signal === undefined) {
    return new Promise((resolve) => {
      clock.setTimer(ms, resolve);
    });
  }
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const timer = clock.setTimer(ms, () => {
      unsubscribeAbort(subscription);
      resolve();
    });
    const subscription = subscribeAbort(signal, () => {
      clock.clearTimer(timer);
      reject(abortReason(signal));
    });
  });
}

/**
 * The error a cancelled operation rejects with: the signal's reason, or an `AbortError`
 * `DOMException` when the reason is missing (as `fetch` does).
 * @internal
 */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
