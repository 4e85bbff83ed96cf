import { DeadlineExceededError } from '../errors.js';
import { type AbortSubscription, subscribeAbort, unsubscribeAbort } from '../signals/abort-link.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { Fallback, FallbackStop } from './fallback.js';

/** The bounds of the call a fallback stands in for. */
export interface FallbackBounds {
  /** The call's clock (its deadline timer runs on it). */
  readonly clock: Clock;
  /** Clock reading (ms) at which the call's deadline passes; `Infinity` without one. */
  readonly deadlineAt: number;
  /** The call's deadline in ms, for the error when it passes (`undefined` without one). */
  readonly deadline: number | undefined;
  /** The caller's signal, if any. */
  readonly signal: AbortSignal | undefined;
}

/**
 * Runs `fallback` for a call that stopped, inside the call's bounds (DESIGN §3.8): the deadline bounds
 * the whole call, its fallback included. `stop.signal` aborts when the deadline passes (it is already
 * aborted when the call stopped for it) or when the caller's signal aborts while the fallback runs.
 * A value the fallback returns, or a promise that settles before the deadline, is the outcome. A
 * promise still pending at the deadline is left (its rejection handled): the call rejects with a
 * `DeadlineExceededError` — the call's own when it stopped for the deadline, else a new one whose
 * `cause` is the call's error. So a fallback answering a call that already used its deadline
 * serves only what it has at hand (a value, or a promise that settles without waiting on a timer or
 * I/O). The caller's abort while it runs rejects with the signal's reason; a call that stopped because
 * the caller aborted (a fallback listing `cancelled`) is bounded by its deadline only.
 * @param stop what the fallback is told, without its signal
 * @param original the call's error (`undefined` when it stopped on a rejected value)
 */
export function runFallback(
  fallback: Fallback,
  stop: Omit<FallbackStop, 'signal'>,
  original: unknown,
  bounds: FallbackBounds,
): unknown {
  const { clock, deadlineAt, signal } = bounds;
  const controller = new AbortController();
  const timed = deadlineAt !== Infinity;
  const now = timed ? clock.now() : 0;
  const passed = (): DeadlineExceededError =>
    original instanceof DeadlineExceededError
      ? original
      : new DeadlineExceededError(bounds.deadline ?? 0, { cause: original });
  if (timed && now >= deadlineAt) controller.abort(passed());
  else if (signal?.aborted === true) controller.abort(signal.reason);
  const result: unknown = fallback.fn({ ...stop, signal: controller.signal });
  // Only the caller's abort while the fallback runs ends it: one before (a `cancelled` stop) is its question.
  const watched = signal !== undefined && !signal.aborted ? signal : undefined;
  if (!isThenable(result) || (!timed && watched === undefined)) return result;
  return new Promise((resolve, reject) => {
    let subscription: AbortSubscription | undefined;
    let timer: TimerHandle | undefined;
    const end = (): void => {
      if (timer !== undefined) clock.clearTimer(timer);
      if (subscription !== undefined) unsubscribeAbort(subscription);
      timer = subscription = undefined;
    };
    const stopWith = (reason: unknown): void => {
      end();
      if (!controller.signal.aborted) controller.abort(reason);
      reject(reason);
    };
    if (timed) timer = clock.setTimer(Math.max(0, deadlineAt - now), () => stopWith(passed()));
    if (watched !== undefined)
      subscription = subscribeAbort(watched, () => stopWith(watched.reason));
    // Adopted, not called directly: a `then` that throws rejects here instead of escaping before
    // the timer and the listener are dropped.
    Promise.resolve(result).then(
      (value) => {
        end();
        resolve(value);
      },
      (error: unknown) => {
        end();
        reject(error);
      },
    );
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
