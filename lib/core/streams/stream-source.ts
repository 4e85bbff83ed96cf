// What counts as a stream, and one way of pulling from each kind (DESIGN §3.10): an AsyncIterable
// (async generators, Node readable streams, a fetch body) is pulled through its own iterator; an
// Observable (anything with `subscribe` and the interop `Symbol.observable` / '@@observable' method,
// as rxjs has) is subscribed once and buffered, since it pushes whether or not anyone pulls.

/** A minimal Observable as interop libraries shape it (rxjs, zen-observable). */
export interface ObservableLike<T> {
  /** Starts delivering to `observer`; the returned subscription's `unsubscribe()` stops it. */
  subscribe(observer: {
    next: (value: T) => void;
    error: (error: unknown) => void;
    complete: () => void;
  }): { unsubscribe(): void };
}

/** What the stream layer uses of the attempt that opened a stream (the executor's attempt context). */
export interface StreamAttempt {
  /** The attempt's signal, handed to the work. */
  readonly signal: AbortSignal;
  /** Why the attempt was aborted, or `undefined`. */
  readonly reason: unknown;
  /** Milliseconds the attempt may run; `Infinity` when nothing bounds it. */
  readonly bound: number;
  /** Aborts the attempt's signal with `reason`. */
  abort(reason: unknown): void;
}

/** A source a stream can be pulled from: what a streaming `policy.run` accepts. */
export type StreamSource<T> = AsyncIterable<T> | ObservableLike<T>;

/** Marks this library's own protected streams, so a stream run inside another's work is a plain value there. */
export const PROTECTED: unique symbol = Symbol('nresilience.protectedStream');

const OBSERVABLE_KEY: symbol | string =
  (Symbol as { observable?: symbol }).observable ?? '@@observable';

/** Whether `value` is a stream the executor protects: an AsyncIterable or an Observable, not already protected. */
export function isStreamSource(value: unknown): value is StreamSource<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<PropertyKey, unknown>;
  if (v[PROTECTED] === true) return false;
  return (
    typeof v[Symbol.asyncIterator] === 'function' ||
    (typeof v.subscribe === 'function' &&
      (typeof v[OBSERVABLE_KEY] === 'function' || typeof v['@@observable'] === 'function'))
  );
}

/** The iterator to pull `source` through. */
export function iteratorOf<T>(source: StreamSource<T>): AsyncIterator<T> {
  const iterable = source as Partial<AsyncIterable<T>>;
  return typeof iterable[Symbol.asyncIterator] === 'function'
    ? iterable[Symbol.asyncIterator]!()
    : new ObservableIterator(source as ObservableLike<T>);
}

/**
 * Ends `source`: its iterator's `return()` (an async generator's `finally` runs; queued behind a
 * pull still pending, as the language does it) and, for a Node stream whose pull is still pending,
 * `destroy()`, which ends that pull at once. Rejections of either are observed, never unhandled.
 */
export function closeSource(
  source: StreamSource<unknown>,
  iterator: AsyncIterator<unknown>,
  pulling: boolean,
): void {
  try {
    const returned = iterator.return?.();
    if (returned !== undefined) Promise.resolve(returned).catch(ignore);
  } catch {
    // A throwing return() has nothing more to close.
  }
  const destroy = (source as { destroy?: unknown }).destroy;
  if (pulling && typeof destroy === 'function') {
    try {
      (destroy as () => void).call(source);
    } catch {
      // Already destroyed.
    }
  }
}

function ignore(): void {}

/**
 * An Observable pulled as an async iterator: subscribed on the first pull, values queued until
 * pulled (an Observable has no back-pressure), `return()` unsubscribes.
 */
class ObservableIterator<T> implements AsyncIterator<T> {
  private readonly queue: T[] = [];
  private waiting:
    { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined =
    undefined;
  private subscription: { unsubscribe(): void } | undefined = undefined;
  private ended = false;
  private failed = false;
  private failure: unknown = undefined;
  private closed = false;

  constructor(private readonly observable: ObservableLike<T>) {}

  next(): Promise<IteratorResult<T>> {
    if (this.subscription === undefined && !this.ended && !this.closed) this.subscribe();
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.queue.shift()! });
    if (this.failed) {
      this.failed = false;
      this.closed = true;
      return Promise.reject(this.failure);
    }
    if (this.ended || this.closed) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.closed = true;
    this.queue.length = 0;
    const subscription = this.subscription;
    this.subscription = undefined;
    subscription?.unsubscribe();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ done: true, value: undefined });
    return Promise.resolve({ done: true, value: undefined });
  }

  private subscribe(): void {
    const subscription = this.observable.subscribe({
      next: (value) => {
        if (this.closed) return;
        const waiting = this.waiting;
        if (waiting === undefined) this.queue.push(value);
        else {
          this.waiting = undefined;
          waiting.resolve({ done: false, value });
        }
      },
      error: (error) => {
        if (this.closed) return;
        this.ended = true;
        const waiting = this.waiting;
        if (waiting === undefined) {
          this.failed = true;
          this.failure = error;
        } else {
          this.waiting = undefined;
          this.closed = true;
          waiting.reject(error);
        }
      },
      complete: () => {
        this.ended = true;
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting?.resolve({ done: true, value: undefined });
      },
    });
    // Closed while subscribing (a synchronous source the consumer stopped at once): unsubscribe now.
    if (this.closed) subscription.unsubscribe();
    else this.subscription = subscription;
  }
}
