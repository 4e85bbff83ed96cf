import { type AbortSubscription, subscribeAbort, unsubscribeAbort } from '../signals/abort-link.js';
import type { Drain } from '../signals/drain.js';
import type { Clock } from './clock.js';

/**
 * Waits `ms` milliseconds on `clock`: the one wait of the library (backoff, guarded pause, scripted
 * delays of the testing kit). The timer keeps the process alive, since the caller awaits nothing else.
 * - `ms <= 0` (or NaN) resolves without a timer and without touching the signal.
 * - An already-aborted `signal` rejects at once with its reason and sets no timer.
 * - When `signal` aborts during the wait, the timer is cleared and the promise rejects with
 *   `signal.reason` at once; the one listener put on the signal is removed when the wait ends either way.
 * - When `drain` starts before or during the wait, it resolves `true` at once (the timer cleared).
 * @param clock the clock whose timer paces the wait
 * @param ms how long to wait, in milliseconds
 * @param signal optional cancellation
 * @param drain optional shutdown switch that cuts the wait short
 * @returns `true` when the drain cut the wait short, else `false`
 */
export function sleep(
  clock: Clock,
  ms: number,
  signal?: AbortSignal,
  drain?: Drain,
): Promise<boolean> {
  if (!(ms > 0)) return Promise.resolve(false);
  if (drain?.draining) return Promise.resolve(true);
  if (signal === undefined && drain === undefined)
    return new Promise((resolve) => void clock.setTimer(ms, () => resolve(false), true));
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let subscription: AbortSubscription | undefined;
    let forget: (() => void) | undefined;
    const end = (): void => {
      if (subscription !== undefined) unsubscribeAbort(subscription);
      forget?.();
    };
    if (signal !== undefined) {
      subscription = subscribeAbort(signal, () => {
        clock.clearTimer(timer);
        forget?.();
        reject(signal.reason);
      });
    }
    if (drain !== undefined) {
      forget = drain.onStart(() => {
        clock.clearTimer(timer);
        if (subscription !== undefined) unsubscribeAbort(subscription);
        resolve(true);
      });
    }
    const timer = clock.setTimer(
      ms,
      () => {
        end();
        resolve(false);
      },
      true,
    );
  });
}
