import { Ambient } from '../ambient/ambient-context.js';
import { isRetryable } from '../classification/verdict.js';
import { PolicyConfigError } from '../errors.js';
import type { AttemptContext } from '../execution/attempt-context.js';
import { HeldCall } from '../execution/held-call.js';
import type { ExecutablePolicy } from '../execution/executable-policy.js';
import { RESTARTS_RULE } from '../rules/option-rules.js';
import { subscribeAbort, unsubscribeAbort } from '../signals/abort-link.js';
import { checkValue } from '../rules/value-rule.js';
import { ProtectedStream } from '../streams/protected-stream.js';
import { checkStreamable } from '../streams/stream-head.js';
import { PROTECTED, type StreamSource } from '../streams/stream-source.js';

/**
 * A stream that can be re-opened where it broke (DESIGN §3.10): what `policy.run` takes to restart a
 * stream from its last checkpoint after a mid-stream failure.
 *
 * ```ts
 * const events = await policy.run({
 *   start: 0,
 *   checkpoint: (event: { seq: number }) => event.seq + 1,
 *   source: (from, ctx) => feed.subscribe({ fromSeq: from, signal: ctx.signal }),
 * });
 * ```
 * @typeParam T the elements
 * @typeParam C a position in the stream (an offset, a sequence number, a resume token)
 */
export interface CheckpointedSource<T, C> {
  /** Where the first attempt opens the stream. */
  readonly start: C;
  /**
   * The position to re-open at once `item` has been delivered: the position of the element after
   * it. Called for every element, before the consumer gets it, so a restart never repeats one.
   */
  readonly checkpoint: (item: T) => C;
  /** Opens the stream at `from` (an AsyncIterable or an Observable, or a promise of one). */
  readonly source: (
    from: C,
    context: AttemptContext,
  ) => StreamSource<T> | PromiseLike<StreamSource<T>>;
  /** At most this many restarts for this stream, an integer in [0, 100]. Default: the policy's `restarts` (3). */
  readonly restarts?: number;
}

/** What {@link runCheckpointed} needs of `policy.run`: a run with the call's options. */
export type SegmentRunner = (
  work: (context: AttemptContext) => unknown,
  options: {
    signal?: AbortSignal;
    attempts?: number;
    facts?: object;
    hold: HeldCall;
    continuing?: { attempts: number; error: unknown; deadlineAt: number; held: HeldCall };
  },
) => Promise<unknown>;

/** Whether `value` is given in the checkpointed form `{ start, checkpoint, source }`. */
export function isCheckpointedSource(
  value: unknown,
): value is CheckpointedSource<unknown, unknown> {
  return typeof value === 'object' && value !== null && 'source' in value;
}

/**
 * Runs a checkpointed stream: the first segment through `run` (retried until its first element like
 * any stream), then a {@link CheckpointedStream} that re-opens it after a mid-stream failure.
 * `call` is what the caller gave the call (`RunOptions`): its signal, its cap on the first
 * segment's attempts, and its facts, handed to every segment and to each restart decision.
 * @throws PolicyConfigError naming the field for a bad `checkpoint`, `source` or `restarts`, or a hedged policy
 */
export async function runCheckpointed<T, C>(
  policy: ExecutablePolicy,
  spec: CheckpointedSource<T, C>,
  run: SegmentRunner,
  call: { readonly signal?: AbortSignal; readonly attempts?: number; readonly facts?: object },
): Promise<CheckpointedStream<T>> {
  checkStreamable(policy.options);
  if (typeof spec.source !== 'function')
    throw new PolicyConfigError(
      'source',
      spec.source,
      'must be a function (from, ctx) => AsyncIterable or Observable',
    );
  if (typeof spec.checkpoint !== 'function')
    throw new PolicyConfigError(
      'checkpoint',
      spec.checkpoint,
      'must be a function (item) => the position after it',
    );
  const restarts = spec.restarts ?? policy.options.restarts;
  checkValue(RESTARTS_RULE, 'restarts', restarts);
  const stream = new CheckpointedStream<T>(
    policy,
    spec as CheckpointedSource<T, unknown>,
    run,
    call.signal,
    call.facts,
    restarts,
  );
  await stream.open(call.attempts);
  return stream;
}

/**
 * A checkpointed stream as its consumer reads it: elements once each, in order, across restarts.
 * A mid-stream failure the policy's classifier calls worth retrying (Transient or Throttled, a stall
 * included) re-opens the source at the last checkpoint, as a retry of the same call: backoff,
 * retry budget, breaker and the policy's deadline (counted from the restart, bounding the wait for
 * its first element) decide it, at most `restarts` times; each restart that delivers is reported
 * as a `streamResumed` event. The call is observed once, ending when the stream does. Other
 * failures, and a failure with no restart left, reach the consumer.
 */
export class CheckpointedStream<T> implements AsyncIterableIterator<T> {
  /** Marks the stream as protected already. */
  readonly [PROTECTED] = true;
  private segment: ProtectedStream<T> | undefined = undefined;
  private position: unknown;
  private restartsLeft: number;
  private delivered = 0;
  private restartCount = 0;
  private ended = false;
  /** Aborts the restart in progress (its backoff or its wait for a first element) when the consumer stops. */
  private restarting: AbortController | undefined;
  private readonly held = new HeldCall();

  /**
   * Use `policy.run({ start, checkpoint, source })`.
   * @internal
   */
  constructor(
    private readonly policy: ExecutablePolicy,
    private readonly spec: CheckpointedSource<T, unknown>,
    private readonly run: SegmentRunner,
    private readonly signal: AbortSignal | undefined,
    private readonly facts: object | undefined,
    restarts: number,
  ) {
    this.position = spec.start;
    this.restartsLeft = restarts;
  }

  /** Elements delivered to the consumer so far, across restarts. */
  get received(): number {
    return this.delivered;
  }

  /** Restarts made so far. */
  get restarts(): number {
    return this.restartCount;
  }

  /** The stream itself: iterate it once (`for await`). */
  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * Opens the first segment (the executor retries it until its first element).
   * @internal
   */
  async open(attempts: number | undefined): Promise<void> {
    this.segment = this.accept(
      await this.run(this.work, {
        signal: this.signal,
        attempts,
        facts: this.facts,
        hold: this.held,
      }),
    );
  }

  /** The next element; rejects with the failure that could not be restarted. */
  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      const segment = this.segment;
      if (this.ended || segment === undefined) return { done: true, value: undefined };
      let result: IteratorResult<T>;
      try {
        result = await segment.next();
      } catch (error) {
        if (this.ended) return { done: true, value: undefined };
        if (!this.restartable(error)) throw this.end(error);
        await this.restart(error);
        continue;
      }
      if (result.done === true) {
        this.end(undefined);
        return result;
      }
      try {
        this.position = this.spec.checkpoint(result.value);
      } catch (error) {
        void segment.return();
        throw this.end(error);
      }
      this.delivered++;
      return result;
    }
  }

  /** Stops the stream: the current source ends and its attempt's signal aborts; nothing restarts. */
  async return(): Promise<IteratorResult<T>> {
    if (!this.ended) {
      const segment = this.segment;
      this.end(undefined);
      this.restarting?.abort(
        new DOMException('The stream was stopped by its consumer', 'AbortError'),
      );
      await segment?.return();
    }
    return { done: true, value: undefined };
  }

  /** Each attempt's work: the source opened at the last checkpoint. */
  private readonly work = (context: AttemptContext): unknown =>
    this.spec.source(this.position, context);

  private accept(value: unknown): ProtectedStream<T> {
    if (value instanceof ProtectedStream) return value as ProtectedStream<T>;
    throw this.end(
      new PolicyConfigError(
        'source',
        value,
        'must return an AsyncIterable or an Observable (or a promise of one)',
      ),
    );
  }

  /**
   * Whether a mid-stream `error` may re-open the stream: a restart left, a verdict worth retrying
   * (classified with the call's facts, as its attempts are), the caller still there.
   */
  private restartable(error: unknown): boolean {
    if (this.restartsLeft <= 0) return false;
    if (this.signal?.aborted === true) return false;
    const facts = this.facts;
    const context =
      facts === undefined ? { callerAborted: false } : { callerAborted: false, facts };
    try {
      return isRetryable(this.policy.options.classifier.classifyError(error, context));
    } catch {
      return false;
    }
  }

  /** Re-opens the source at the last checkpoint, as a retry of the call; rejects with the call's final error. */
  private async restart(error: unknown): Promise<void> {
    this.restartsLeft--;
    this.restartCount++;
    this.segment = undefined;
    const o = this.policy.options;
    const deadline = restartDeadline(o.deadline, o.useAmbientDeadline);
    const deadlineAt = deadline === undefined ? Infinity : o.clock.now() + deadline;
    // The consumer may stop while the restart waits (backoff, first element): nothing re-opens then.
    const restarting = (this.restarting = new AbortController());
    const caller = this.signal;
    const link =
      caller === undefined
        ? undefined
        : subscribeAbort(caller, () => restarting.abort(caller.reason));
    let value: unknown;
    try {
      value = await this.run(this.work, {
        signal: restarting.signal,
        facts: this.facts,
        hold: this.held,
        continuing: { attempts: 1, error, deadlineAt, held: this.held },
      });
    } catch (final) {
      if (this.ended) return;
      throw this.end(final);
    } finally {
      if (link !== undefined) unsubscribeAbort(link);
      this.restarting = undefined;
    }
    const segment = this.accept(value);
    if (this.ended) {
      // Stopped while re-opening: the new source ends too.
      void segment.return();
      return;
    }
    this.segment = segment;
    this.held.report({ kind: 'streamResumed', attempt: segment.attempts, verdict: 'Ok' });
  }

  /** Ends the stream for its observer (with the failure that ended it, if any); returns `error`. */
  private end(error: unknown): unknown {
    if (!this.ended) {
      this.ended = true;
      this.held.end(error);
    }
    return error;
  }
}

/**
 * A restart's deadline, counted from the restart: the policy's own, or under `useAmbientDeadline` the
 * inbound caller's time left when that is tighter (0 once it has passed, so no attempt starts).
 */
function restartDeadline(own: number | undefined, useAmbient: boolean): number | undefined {
  const left = useAmbient ? Ambient.remaining() : undefined;
  if (left === undefined || (own !== undefined && own <= left)) return own;
  return Math.max(0, left);
}
