import { PolicyConfigError } from '../errors.js';
import type { Clock } from '../time/clock.js';
import { ProtectedStream } from './protected-stream.js';
import { type StreamAttempt, type StreamSource, closeSource, iteratorOf } from './stream-source.js';

// The executor's one hook for streams (DESIGN §3.10): when an attempt's work returns a stream, the
// attempt is not over until the stream's first element (or its end) arrives. The executor calls
// `streamHead` where the attempt's value arrives, inside the attempt's bound, and records the
// attempt when the promise settles: a protected stream is the attempt's value; a failed or silent
// first pull is the attempt's failure, retried like any other.

/** What the hook reads of the call running the attempt. */
export interface StreamCall {
  readonly plan: {
    readonly options: { readonly clock: Clock; readonly attemptTimeout: number | undefined };
  };
  /** The caller's signal, if any. */
  readonly signal: AbortSignal | undefined;
  /** Attempts made so far, the running one included. */
  readonly attempts: number;
}

/**
 * Refuses a policy that cannot run a stream: a hedged one (a hedge would start a second copy of a
 * stream whose first elements may already be on their way to the consumer, DESIGN §3.8).
 * @throws PolicyConfigError (field `hedge`) when the policy's options have a hedge
 */
export function checkStreamable(options: object): void {
  const hedge = (options as { hedge?: unknown }).hedge;
  if (hedge !== undefined)
    throw new PolicyConfigError(
      'hedge',
      hedge,
      'a hedged policy cannot run a stream (the work returned an AsyncIterable or Observable); use a policy without hedge for it',
    );
}

/**
 * Waits for the first element of the stream an attempt returned (a hedged policy's is refused and
 * ended without a pull): resolves with the stream as a
 * {@link ProtectedStream} (its first element held for the consumer), rejects with the first pull's
 * error. When the attempt is aborted first (its bound, the deadline, the caller), the source is ended
 * (`return()`, a Node stream destroyed) and the promise rejects with the abort's reason.
 */
export function streamHead<T>(
  call: StreamCall,
  context: StreamAttempt,
  source: StreamSource<T>,
): Promise<ProtectedStream<T>> {
  let iterator: AsyncIterator<T>;
  try {
    iterator = iteratorOf(source);
  } catch (error) {
    return Promise.reject(error);
  }
  try {
    checkStreamable(call.plan.options);
  } catch (refused) {
    // Never pulled: the source is ended at once (a fetch body's connection closed).
    closeSource(source, iterator, false);
    return Promise.reject(refused);
  }
  // A context nothing can abort (no bound, no caller signal) needs no listener.
  const abortable = context.bound !== Infinity || call.signal !== undefined;
  return new Promise<ProtectedStream<T>>((resolve, reject) => {
    let settled = false;
    const signal = abortable ? context.signal : undefined;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      closeSource(source, iterator, true);
      reject(context.reason ?? signal!.reason);
    };
    if (signal !== undefined) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const done = (): boolean => {
      if (settled) return false;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    let first: Promise<IteratorResult<T>>;
    try {
      first = Promise.resolve(iterator.next());
    } catch (error) {
      first = Promise.reject(error);
    }
    first.then(
      (result) => {
        if (!done()) return;
        const { clock, attemptTimeout } = call.plan.options;
        resolve(
          new ProtectedStream({
            source,
            iterator,
            context,
            first: result,
            attempts: call.attempts,
            clock,
            gap: attemptTimeout,
            signal: call.signal,
          }),
        );
      },
      (error: unknown) => {
        if (done()) reject(error);
      },
    );
  });
}
