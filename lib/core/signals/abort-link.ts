/**
 * Abort subscriptions that put one listener on a caller's signal however many calls share it.
 *
 * Many concurrent calls often share one request signal; a listener each would trip Node's
 * MaxListenersExceededWarning at 11 and leave work for the GC. Here the signal gets a single listener
 * that fans out to every subscriber, and it is removed when the last subscriber leaves, so the signal
 * ends with exactly the listeners it started with (DESIGN §3.2).
 */

/** A subscription returned by {@link subscribeAbort}; pass it to {@link unsubscribeAbort}. */
export interface AbortSubscription {
  readonly signal: AbortSignal;
  readonly callback: () => void;
}

interface FanOut {
  readonly subscribers: Set<AbortSubscription>;
  readonly listener: () => void;
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

/** Calls `callback` once when `signal` aborts. The signal must not be aborted already. */
export function subscribeAbort(signal: AbortSignal, callback: () => void): AbortSubscription {
  let fan = fanOuts.get(signal);
  if (fan === undefined) {
    const subscribers = new Set<AbortSubscription>();
    const listener = () => {
      fanOuts.delete(signal);
      signal.removeEventListener('abort', listener);
      for (const subscription of subscribers) subscription.callback();
      subscribers.clear();
    };
    fan = { subscribers, listener };
    fanOuts.set(signal, fan);
    signal.addEventListener('abort', listener);
  }
  const subscription: AbortSubscription = { signal, callback };
  fan.subscribers.add(subscription);
  return subscription;
}

/** Ends a subscription; removes the signal's listener when it was the last one. Idempotent. */
export function unsubscribeAbort(subscription: AbortSubscription): void {
  const fan = fanOuts.get(subscription.signal);
  if (fan === undefined || !fan.subscribers.delete(subscription)) return;
  if (fan.subscribers.size === 0) {
    fanOuts.delete(subscription.signal);
    subscription.signal.removeEventListener('abort', fan.listener);
  }
}
