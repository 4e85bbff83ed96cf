import { AttemptStalledError, type Clock, type TimerHandle } from '../core/index.js';
import type { ReadableStreamReadResult, UnderlyingSource } from 'node:stream/web';
import { BodyLengthError, promisedLength } from './body-length.js';

/**
 * A copy of `response` whose body is `body`, keeping status, headers and the properties the
 * `Response` constructor cannot set (`url`, `redirected`).
 */
export function rewrap(response: Response, body: RequestInit['body']): Response {
  const copy = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(copy, 'url', { value: response.url });
  Object.defineProperty(copy, 'redirected', { value: response.redirected });
  return copy;
}

/**
 * Reads the whole body inside the attempt (`bufferResponses: true`): a body broken or stalled mid-way
 * fails the attempt, which is then retried like any transient failure. So does a body of another
 * length than its `Content-Length` (`BodyLengthError`, Transient) when the transport did not say so.
 */
export async function bufferedResponse(response: Response): Promise<Response> {
  if (response.body === null) return response;
  const bytes = await response.arrayBuffer();
  const expected = promisedLength(response.headers);
  if (expected !== undefined && bytes.byteLength !== expected)
    throw new BodyLengthError(expected, bytes.byteLength);
  return rewrap(response, bytes);
}

/** Told when a gap-bounded body stalls, with the `AttemptStalledError` its read fails with. */
export type StallListener = (error: AttemptStalledError) => void;

/**
 * Bounds the silence of `response`'s body while the caller reads it: a read that gets nothing for
 * `gap` ms fails with `AttemptStalledError` naming the bytes received, and the body is cancelled.
 * The bound runs only while a read is pending (the stream pulls on demand), so a consumer that reads
 * slowly is never taken for a stalled server; a server that goes silent while a read waits is.
 * @param gap ms allowed between two chunks while a read is pending
 * @param stalled told when the body stalls (to abort the attempt's transport signal)
 * @param onBroken told the error of a read that failed (the body broke), before the consumer gets it
 */
export function gapBoundedResponse(
  response: Response,
  gap: number,
  clock: Clock,
  stalled?: StallListener,
  onBroken?: (error: unknown) => void,
): Response {
  const source = response.body;
  if (source === null) return response;
  return rewrap(response, gapBoundedStream(source, gap, clock, 0, stalled, onBroken));
}

/**
 * `source` with its silence bounded as {@link gapBoundedResponse} describes.
 * @param offset bytes delivered before this stream began (a resumed download): `AttemptStalledError`
 *   counts from there
 * @param stalled told when the body stalls, after the read failed and before the source is cancelled
 * @param onBroken told the error of a read that failed (the body broke), before the consumer gets it
 */
export function gapBoundedStream(
  source: ReadableStream<Uint8Array>,
  gap: number,
  clock: Clock,
  offset = 0,
  stalled?: StallListener,
  onBroken?: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    new GapBoundedSource(source.getReader(), gap, clock, offset, stalled, onBroken),
    { highWaterMark: 0 },
  );
}

/**
 * The gap-bounded stream's source. One timer per body, not one per chunk: a pull records when its
 * read began and arms the timer only when none is armed; when the timer fires it re-arms itself for
 * the pending read's own due time, stalls the body if that has passed, and lapses when no read is
 * pending (the next pull arms it again). A chunk costs a clock reading instead of a timer set and
 * cleared, which on a loopback answer was most of the bound's CPU (bench/http-body.ts).
 */
class GapBoundedSource implements UnderlyingSource<Uint8Array> {
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined = undefined;
  private received: number;
  /** Clock reading at which the pending read began, -1 while none is pending. */
  private readingSince = -1;
  private timer: TimerHandle | undefined = undefined;
  /** Set once the body stalled or the consumer cancelled it: later read results are dropped. */
  private ended = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly gap: number,
    private readonly clock: Clock,
    offset: number,
    private readonly stalled: StallListener | undefined,
    private readonly onBroken: ((error: unknown) => void) | undefined,
  ) {
    this.received = offset;
  }

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  pull(): Promise<void> {
    const now = this.clock.now();
    this.readingSince = now;
    if (this.timer === undefined)
      this.timer = this.clock.setTimer(this.gap, this.check, false, now);
    return this.reader.read().then(this.delivered, this.failed);
  }

  cancel(reason: unknown): Promise<void> {
    this.ended = true;
    this.stop();
    return this.reader.cancel(reason);
  }

  private readonly delivered = (result: ReadableStreamReadResult<Uint8Array>): void => {
    this.readingSince = -1;
    if (this.ended) return;
    if (result.done) {
      this.stop();
      this.controller!.close();
    } else {
      this.received += result.value.byteLength;
      this.controller!.enqueue(result.value);
    }
  };

  private readonly failed = (error: unknown): void => {
    this.readingSince = -1;
    this.stop();
    if (this.ended) return;
    this.onBroken?.(error);
    this.controller!.error(error);
  };

  private readonly check = (): void => {
    this.timer = undefined;
    if (this.readingSince < 0 || this.ended) return;
    const now = this.clock.now();
    const due = this.readingSince + this.gap;
    if (now < due) {
      this.timer = this.clock.setTimer(due - now, this.check, false, now);
      return;
    }
    this.ended = true;
    const error = new AttemptStalledError(this.gap, this.received);
    this.controller!.error(error);
    // Whatever the transport started with the attempt's signal stops too, as when a buffered read stalls.
    this.stalled?.(error);
    this.reader.cancel(error).catch(() => undefined);
  };

  private stop(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}

/** Lets a response's connection go: the body is cancelled (nothing more is read from the wire). */
export function discard(response: Response | undefined): void {
  if (response?.body != null && !response.bodyUsed) response.body.cancel().catch(() => undefined);
}

/**
 * `response` whose body fails with the caller's abort reason (and lets its connection go) when
 * `signal` aborts while the body is still being read, as `fetch`'s own body does. The attempt's
 * signal, which the transport holds, is released from the caller's when the call settles, so without
 * this a caller's abort after the headers would leave a pending read waiting for the server (or the
 * gap bound). The listener is removed once the body ends, fails or is cancelled.
 * @param onBroken told the error of a read that failed (the body broke), before the consumer gets it;
 *   given, the body is wrapped even without a signal
 */
export function abortableResponse(
  response: Response,
  signal: AbortSignal | undefined,
  onBroken?: (error: unknown) => void,
): Response {
  const source = response.body;
  if ((signal === undefined && onBroken === undefined) || source === null) return response;
  const reader = source.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const release = (): void => signal?.removeEventListener('abort', abort);
  const abort = (): void => {
    release();
    controller.error(signal!.reason);
    reader.cancel(signal!.reason).catch(() => undefined);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (signal?.aborted === true) abort();
        else signal?.addEventListener('abort', abort, { once: true });
      },
      pull: () =>
        reader.read().then(
          (result) => {
            if (signal?.aborted === true) return;
            if (result.done) {
              release();
              controller.close();
            } else controller.enqueue(result.value);
          },
          (error: unknown) => {
            release();
            if (signal?.aborted === true) return;
            onBroken?.(error);
            controller.error(error);
          },
        ),
      cancel: (reason) => {
        release();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return rewrap(response, body);
}
