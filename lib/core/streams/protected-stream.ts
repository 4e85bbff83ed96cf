import { AttemptStalledError } from '../errors.js';
import { type AbortSubscription, subscribeAbort, unsubscribeAbort } from '../signals/abort-link.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { PROTECTED, type StreamAttempt, type StreamSource, closeSource } from './stream-source.js';

/** What a {@link ProtectedStream} is built with: the accepted attempt's source and the call's bounds. */
export interface StreamSegment<T> {
  readonly source: StreamSource<T>;
  readonly iterator: AsyncIterator<T>;
  /** The accepted attempt's context: aborted when the consumer stops early. */
  readonly context: StreamAttempt;
  /** The first pull's result, delivered first. */
  readonly first: IteratorResult<T>;
  /** Attempts the call made up to the accepted one (the accepted one included). */
  readonly attempts: number;
  readonly clock: Clock;
  /** The longest silence while a pull is pending, ms (the policy's `attemptTimeout`); `undefined` = none. */
  readonly gap: number | undefined;
  /** The caller's signal: aborting it ends the stream. */
  readonly signal: AbortSignal | undefined;
}

const DONE: IteratorResult<never> = Object.freeze({ done: true, value: undefined });

/**
 * A stream whose first element a policy waited for (DESIGN §3.10): what `policy.run` resolves with
 * when the work returns an AsyncIterable or an Observable. Iterate it once (`for await`).
 * - Every element is delivered once, in order; failures after the first element are the consumer's:
 *   a pull rejects with the source's error and the stream ends.
 * - While a pull is pending and the policy has an `attemptTimeout`, a source silent for that long is
 *   ended and the pull rejects with `AttemptStalledError` (`unit: 'items'`, `received` = elements
 *   delivered). A consumer that is slow between pulls is never timed.
 * - Stopping early (`break`, `return()`) or the caller's signal aborting ends the source: its
 *   `return()` (and an async generator's `finally`) runs, a Node stream is destroyed, and the
 *   accepted attempt's signal aborts at once. Nothing restarts.
 */
export class ProtectedStream<T> implements AsyncIterableIterator<T> {
  /** Marks the stream as protected already (a run inside another's work hands it on as a value). */
  readonly [PROTECTED] = true;
  private readonly segment: StreamSegment<T>;
  private first: IteratorResult<T> | undefined;
  private delivered = 0;
  private ended = false;
  private pulling = false;
  private timer: TimerHandle | undefined = undefined;
  private pending:
    { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined =
    undefined;
  private link: AbortSubscription | undefined = undefined;

  /**
   * Built by the executor when an attempt's stream delivered its first element (or ended).
   * @param segment the accepted attempt's source, its first element, and the call's bounds
   * @internal
   */
  constructor(segment: StreamSegment<T>) {
    this.segment = segment;
    this.first = segment.first;
    const signal = segment.signal;
    if (signal !== undefined && !segment.first.done)
      this.link = subscribeAbort(signal, () => this.stop(signal.reason, signal.reason));
    if (segment.first.done === true) this.finish();
  }

  /** Elements delivered to the consumer so far. */
  get received(): number {
    return this.delivered;
  }

  /** Attempts the call made before the stream was accepted (the accepted one included). */
  get attempts(): number {
    return this.segment.attempts;
  }

  /** The stream itself: iterate it once (`for await`). */
  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * The next element. Rejects with the source's error, with `AttemptStalledError` after a silence
   * longer than `attemptTimeout` while this pull waits, or with the caller's abort reason.
   */
  next(): Promise<IteratorResult<T>> {
    const first = this.first;
    if (first !== undefined) {
      this.first = undefined;
      if (!first.done) this.delivered++;
      return Promise.resolve(first);
    }
    if (this.ended) return Promise.resolve(DONE);
    if (this.pulling)
      return Promise.reject(
        new TypeError(
          'ProtectedStream: next() called while a pull is pending; iterate it once, with for await',
        ),
      );
    this.pulling = true;
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.pending = { resolve, reject };
      const { gap, clock } = this.segment;
      if (gap !== undefined) this.timer = clock.setTimer(gap, () => this.stalled(gap));
      let pull: Promise<IteratorResult<T>>;
      try {
        pull = Promise.resolve(this.segment.iterator.next());
      } catch (error) {
        pull = Promise.reject(error);
      }
      pull.then(
        (result) => this.pulled(result),
        (error: unknown) => this.pullFailed(error),
      );
    });
  }

  /** Stops the stream: the source ends, the accepted attempt's signal aborts; resolves done. */
  return(): Promise<IteratorResult<T>> {
    if (!this.ended)
      this.stop(
        new DOMException('the stream was stopped by its consumer', 'AbortError'),
        undefined,
      );
    return Promise.resolve(DONE);
  }

  private pulled(result: IteratorResult<T>): void {
    const pending = this.settlePull();
    if (pending === undefined) return;
    if (result.done === true) this.finish();
    else this.delivered++;
    pending.resolve(result);
  }

  private pullFailed(error: unknown): void {
    const pending = this.settlePull();
    if (pending === undefined) return;
    this.finish();
    pending.reject(error);
  }

  /** The pending pull settled: the waiting consumer, or `undefined` when the stream was stopped meanwhile. */
  private settlePull(): typeof this.pending {
    const pending = this.pending;
    this.pending = undefined;
    this.pulling = false;
    this.clearTimer();
    return pending;
  }

  private stalled(gap: number): void {
    this.timer = undefined;
    const error = new AttemptStalledError(gap, this.delivered, 'items');
    this.stop(error, error);
  }

  /**
   * Ends the stream early: the source is closed, the attempt's signal aborted with `reason`; a
   * pending pull rejects with `failure` (or resolves done when it is `undefined`).
   */
  private stop(reason: unknown, failure: unknown): void {
    if (this.ended) return;
    const { source, iterator, context } = this.segment;
    const wasPulling = this.pulling;
    const pending = this.pending;
    this.pending = undefined;
    this.pulling = false;
    this.first = undefined;
    this.finish();
    context.abort(reason);
    closeSource(source, iterator, wasPulling);
    if (pending !== undefined) {
      if (failure === undefined) pending.resolve(DONE);
      else pending.reject(failure);
    }
  }

  /** The stream is over: no timer, no link to the caller's signal. */
  private finish(): void {
    this.ended = true;
    this.clearTimer();
    if (this.link !== undefined) {
      unsubscribeAbort(this.link);
      this.link = undefined;
    }
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      this.segment.clock.clearTimer(this.timer);
      this.timer = undefined;
    }
  }
}
