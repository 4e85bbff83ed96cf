import type { ReadableStreamReadResult, UnderlyingSource } from 'node:stream/web';
import type { Clock, HeldCall } from '../core/index.js';
import { BodyLengthError, promisedLength } from './body-length.js';
import { type StallListener, discard, gapBoundedStream, rewrap } from './response-body.js';

/**
 * Why a broken download was not resumed:
 * - `noETag`, `weakETag`, `noAcceptRanges`, `encoded`: the first answer cannot be resumed safely (no
 *   strong `ETag` to send in `If-Range`, no `Accept-Ranges: bytes`, or a `Content-Encoding`, whose
 *   ranges count encoded bytes while the caller got decoded ones);
 * - `rangeIgnored`: the server answered 200 to the `Range` request with the same `ETag` (it ignores ranges);
 * - `changed`: the `ETag` changed (the server answered 200 to `If-Range`, or a 206 of another representation);
 * - `wrongRange`: a 206 whose `Content-Range` does not start where delivery stopped, stops short of
 *   the end, or disagrees with the first answer's length;
 * - `wrongLength`: a 206 whose body carries more bytes than its `Content-Range` promises (its
 *   `Content-Length` says so before a byte is read, or the bytes do as they arrive);
 * - `failedAnswer`: the resume request's last answer was neither 200 nor 206 (a 404, a 503 after the retries).
 */
export type ResumeRefusal =
  | 'noETag'
  | 'weakETag'
  | 'noAcceptRanges'
  | 'encoded'
  | 'rangeIgnored'
  | 'changed'
  | 'wrongRange'
  | 'wrongLength'
  | 'failedAnswer';

/**
 * A download whose body broke after `delivered` bytes reached the caller, and that could not be
 * continued without splicing two different byte sequences (DESIGN §5 `resumeDownloads`). The caller's
 * read fails with it; `cause` is what broke the body (undici's `TypeError: terminated`, an
 * `AttemptStalledError`, a `BodyLengthError` for a body that ended short or ran long).
 */
export class ResumeRefusedError extends Error {
  override readonly name = 'ResumeRefusedError';
  /**
   * @param reason why, as a {@link ResumeRefusal}
   * @param delivered bytes of the body the caller had received when it broke
   * @param detail the sentence saying why, with the header values involved
   * @param options `cause`: the failure that broke the body
   */
  constructor(
    readonly reason: ResumeRefusal,
    readonly delivered: number,
    detail: string,
    options: { cause: unknown },
  ) {
    super(
      `the download broke after ${delivered} bytes were delivered and was not resumed: ${detail}`,
      options,
    );
  }
}

/** Asks for the rest of the body from `offset`: `Range: bytes=<offset>-`, `If-Range: <etag>`, as the call's next attempt. */
export type ContinueDownload = (offset: number, etag: string, error: unknown) => Promise<Response>;

/** What a resumable first answer promises: its strong `ETag` and, when it said, its length. */
interface Validator {
  readonly etag: string;
  readonly total: number | undefined;
}

type Refusal = readonly [ResumeRefusal, string];

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/i;

/** The first answer's validator, or why it cannot be resumed. */
function validatorOf(headers: Headers): Validator | Refusal {
  const etag = headers.get('etag')?.trim();
  if (etag === undefined || etag === '')
    return [
      'noETag',
      'the first answer had no ETag (a resume needs a strong one to send in If-Range)',
    ];
  if (etag.startsWith('W/'))
    return [
      'weakETag',
      `the first answer's ETag ${etag} is weak (If-Range needs a strong validator, RFC 9110 §13.1.5)`,
    ];
  const ranges = headers.get('accept-ranges');
  if (
    ranges === null ||
    !ranges
      .toLowerCase()
      .split(',')
      .some((unit) => unit.trim() === 'bytes')
  ) {
    return [
      'noAcceptRanges',
      `the first answer did not send Accept-Ranges: bytes${ranges === null ? '' : ` (it sent ${ranges})`}`,
    ];
  }
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return [
      'encoded',
      `the first answer is Content-Encoding: ${encoding} (the caller got decoded bytes; a range counts encoded ones)`,
    ];
  }
  return { etag, total: promisedLength(headers) };
}

/** Where the body of a resumable answer must end: the first answer's length, a 206's `Content-Range` end. */
function endOf(answer: Response): number | undefined {
  if (answer.status !== 206) return promisedLength(answer.headers);
  return Number(CONTENT_RANGE.exec(answer.headers.get('content-range')!.trim())![2]) + 1;
}

/** Why the answer to a resume request from `offset` cannot be appended, or `undefined` when it can. */
function refusalOf(answer: Response, offset: number, validator: Validator): Refusal | undefined {
  const etag = answer.headers.get('etag')?.trim();
  if (
    (answer.status === 200 || answer.status === 206) &&
    etag !== undefined &&
    etag !== validator.etag
  ) {
    return [
      'changed',
      `the representation changed (ETag ${validator.etag}, now ${etag}; answered ${answer.status})`,
    ];
  }
  if (answer.status === 200)
    return [
      'rangeIgnored',
      `the server answered 200 to Range: bytes=${offset}- (it ignores ranges): the whole body again cannot be appended`,
    ];
  if (answer.status !== 206)
    return [
      'failedAnswer',
      `the resume request (Range: bytes=${offset}-) was answered ${answer.status}`,
    ];
  const header = answer.headers.get('content-range') ?? '';
  const range = CONTENT_RANGE.exec(header.trim());
  const said = `Content-Range: ${header === '' ? '(none)' : header} to Range: bytes=${offset}-`;
  if (range === null) return ['wrongRange', `the server answered 206 with ${said}`];
  const [, first, last, size] = range;
  if (Number(first) !== offset)
    return ['wrongRange', `the server answered 206 with ${said}, not starting at byte ${offset}`];
  const total = size === '*' ? undefined : Number(size);
  if (total !== undefined && validator.total !== undefined && total !== validator.total) {
    return [
      'wrongRange',
      `the server answered 206 with ${said}, a length other than the first answer's ${validator.total}`,
    ];
  }
  const end = total ?? validator.total;
  if (end !== undefined && Number(last) !== end - 1)
    return [
      'wrongRange',
      `the server answered 206 with ${said}, stopping short of byte ${end - 1}`,
    ];
  const encoding = answer.headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity')
    return ['wrongRange', `the server answered 206 with Content-Encoding: ${encoding}`];
  const length = promisedLength(answer.headers);
  const promised = Number(last) - offset + 1;
  if (length !== undefined && length !== promised) {
    return [
      'wrongLength',
      `the server answered 206 with ${said} and Content-Length: ${length}, not the ${promised} bytes that range holds`,
    ];
  }
  return undefined;
}

/** Options of {@link resumableResponse}. */
export interface ResumableOptions {
  /** Silence allowed while a read is pending, ms; `undefined` for no bound. */
  readonly gap: number | undefined;
  readonly clock: Clock;
  /** Runs the resume request as the call's next attempt. */
  readonly next: ContinueDownload;
  /** Told of each 206 appended (for the `streamResumed` event). */
  readonly resumed: (answer: Response) => void;
  /**
   * The logical call, held open for its observer while the body is delivered: ended when the body
   * ends, is cancelled, or fails (with the refusal, when a resume would have spliced).
   */
  readonly held: HeldCall;
  /** The caller's signal: a body it aborted is not resumed. */
  readonly signal: AbortSignal | undefined;
  /** Told when the body being read stalls (to abort the signal its attempt handed the transport). */
  readonly stalled: StallListener;
}

/**
 * `response` (a 200 to a GET) whose body, when it breaks or stalls after some bytes reached the
 * caller, carries on from where delivery stopped (DESIGN §5 `resumeDownloads`): only when the first
 * answer had a strong `ETag` and `Accept-Ranges: bytes` and no `Content-Encoding`, and only with a
 * 206 of the same `ETag` whose `Content-Range` starts exactly at the bytes delivered and runs to the
 * end of the first answer's length. Each body must carry exactly the bytes its headers promise (the
 * first answer's `Content-Length`, a 206's `Content-Range`): one that ends short is carried on like a
 * broken one (`BodyLengthError` as what broke it); one that runs long fails the read before a byte past
 * the promised end reaches the caller (a 206: {@link ResumeRefusedError} `wrongLength`; the first
 * answer: `BodyLengthError`), so the caller never reads more than the first answer's length. Anything
 * else fails the read with {@link ResumeRefusedError} rather than splice; a resume the policy refuses
 * (no attempt left, budget, breaker, deadline) fails it with the call's own error. The call stays open
 * for its observer (`options.held`) until the body ends, is cancelled or fails, or the response is
 * garbage-collected unread.
 */
export function resumableResponse(response: Response, options: ResumableOptions): Response {
  const body = response.body;
  if (body === null) {
    options.held.end();
    return response;
  }
  const stream = new ReadableStream<Uint8Array>(
    new ResumableSource(body, validatorOf(response.headers), endOf(response), options),
    { highWaterMark: 0 },
  );
  unread.register(stream, options.held);
  return rewrap(response, stream);
}

// A body dropped without being read to its end or cancelled ends its call once collected, so the
// observer's span and terminal event are never lost (the call stays open while anything can read it).
const unread = new FinalizationRegistry<HeldCall>((held) => held.end());

class ResumableSource implements UnderlyingSource<Uint8Array> {
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private delivered = 0;
  private ended = false;
  /** Whether the body being read is a 206 (a resume), not the first answer's. */
  private resumed = false;

  /**
   * @param end where the body being read must end (the first answer's length, then each 206's
   *   `Content-Range` end); `undefined` when the first answer did not say
   */
  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly validator: Validator | Refusal,
    private end: number | undefined,
    private readonly options: ResumableOptions,
  ) {
    this.reader = this.bounded(body);
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array> | undefined;
      let broken: unknown;
      try {
        result = await this.reader.read();
      } catch (error) {
        broken = error;
      }
      if (this.ended) return;
      if (
        result !== undefined &&
        !result.done &&
        this.end !== undefined &&
        this.delivered + result.value.byteLength > this.end
      ) {
        // More than promised: no byte past the promised end reaches the caller, and it is no break to resume.
        throw this.fail(this.tooLong(this.delivered + result.value.byteLength));
      }
      // A body that ends before its promised end is truncated: carried on from there like a broken one.
      if (result?.done === true && this.end !== undefined && this.delivered < this.end)
        broken = new BodyLengthError(
          this.end,
          this.delivered,
          this.resumed ? 'Content-Range' : 'Content-Length',
        );
      if (broken !== undefined) {
        let rest: Response;
        try {
          rest = await this.resume(broken);
        } catch (failure) {
          // The caller's stream errors with it. A refusal to splice fails the call; the policy's own
          // refusal of the resume already ended it; a caller's abort leaves it as it was accepted.
          this.options.held.end(failure instanceof ResumeRefusedError ? failure : undefined);
          throw failure;
        }
        this.resumed = true;
        this.end = endOf(rest);
        this.reader = this.bounded(rest.body!);
        continue;
      }
      if (result!.done) {
        controller.close();
        this.options.held.end();
      } else {
        this.delivered += result!.value.byteLength;
        controller.enqueue(result!.value);
      }
      return;
    }
  }

  /** The failure of a body that ran past its promised end (read up to `received` bytes). */
  private tooLong(received: number): Error {
    const cause = new BodyLengthError(
      this.end!,
      received,
      this.resumed ? 'Content-Range' : 'Content-Length',
    );
    if (!this.resumed) return cause;
    return new ResumeRefusedError(
      'wrongLength',
      this.delivered,
      `the 206 carried more bytes than its Content-Range promised (${cause.message})`,
      { cause },
    );
  }

  /** Ends the download with `failure`: the wire let go, the call ended failed, the caller's read failed with it. */
  private fail(failure: Error): Error {
    this.ended = true;
    this.reader.cancel(failure).catch(() => undefined);
    this.options.held.end(failure);
    return failure;
  }

  cancel(reason: unknown): Promise<void> {
    this.ended = true;
    this.options.held.end();
    return this.reader.cancel(reason);
  }

  /** The rest of the body from the bytes delivered, as a checked 206; throws why not. */
  private async resume(error: unknown): Promise<Response> {
    if (this.options.signal?.aborted === true) throw error;
    const validator = this.validator;
    if (Array.isArray(validator))
      throw new ResumeRefusedError(validator[0], this.delivered, validator[1], { cause: error });
    const { etag } = validator as Validator;
    const answer = await this.options.next(this.delivered, etag, error);
    const refusal = refusalOf(answer, this.delivered, validator as Validator);
    if (refusal !== undefined || answer.body === null) {
      discard(answer);
      const [reason, detail] = refusal ?? ['wrongRange', 'the server answered 206 without a body'];
      throw new ResumeRefusedError(reason, this.delivered, detail, { cause: error });
    }
    this.options.resumed(answer);
    return answer;
  }

  private bounded(body: ReadableStream<Uint8Array>): ReadableStreamDefaultReader<Uint8Array> {
    const gap = this.options.gap;
    return (
      gap === undefined
        ? body
        : gapBoundedStream(body, gap, this.options.clock, this.delivered, this.options.stalled)
    ).getReader();
  }
}
