import { subscribeAbort, unsubscribeAbort } from '../execution/abort-link.js';
import type { Clock } from './clock.js';

/**
 * Waits `ms` milliseconds on `clock`: the one wait of the library (backoff, guarded pause, scripted
 * delays of the testing kit). The timer keeps the process alive, since the caller awaits nothing else.
 * - `ms <= 0` (or NaN) resolves without a timer and without touching the signal.
 * - An already-aborted `signal` rejects at once with its reason and sets no timer.
 * - When `signal` aborts during the wait, the timer is cleared and the promise rejects with
 *   `signal.reason` at once; the one listener put on the signal is removed when the wait ends either way.
 * @param clock the clock whose timer paces the wait
 * @param ms how long to wait, in milliseconds
 * @param signal optional cancellation
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (!(ms > 0)) return Promise.resolve();
  if (signal === undefined) return new Promise((resolve) => void clock.setTimer(ms, resolve, true));
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const subscription = subscribeAbort(signal, () => {
      clock.clearTimer(timer);
      reject(signal.reason);
    });
    const timer = clock.setTimer(
      ms,
      () => {
        unsubscribeAbort(subscription);
        resolve();
      },
      true,
    );
  });
}
