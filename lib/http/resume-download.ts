import type { ReadableStreamReadResult, UnderlyingSource } from 'node:stream/web';
import type { Clock, HeldCall } from '../core/index.js';
import { discard, gapBoundedStream, rewrap } from './response-body.js';

/**
 * Why a broken download was not resumed:
 * - `noETag`, `weakETag`, `noAcceptRanges`, `encoded`: the first answer cannot be resumed safely (no
 *   strong `ETag` to send in `If-Range`, no `Accept-Ranges: bytes`, or a `Content-Encoding`, whose
 *   ranges count encoded bytes while the caller got decoded ones);
 * - `rangeIgnored`: the server answered 200 to the `Range` request with the same `ETag` (it ignores ranges);
 * - `changed`: the `ETag` changed (the server answered 200 to `If-Range`, or a 206 of another representation);
 * - `wrongRange`: a 206 whose `Content-Range` does not start where delivery stopped, stops short of
 *   the end, or disagrees with the first answer's length;
 * - `failedAnswer`: the resume request's last answer was neither 200 nor 206 (a 404, a 503 after the retries).
 */
export type ResumeRefusal = 'noETag' | 'weakETag' | 'noAcceptRanges' | 'encoded' | 'rangeIgnored' | 'changed' | 'wrongRange' | 'failedAnswer';

/**
 * A download whose body broke after `delivered` bytes reached the caller, and that could not be
 * continued without splicing two different byte sequences (DESIGN §5 `resumeDownloads`). The caller's
 * read fails with it; `cause` is what broke the body (undici's `TypeError: terminated`, an
 * `AttemptStalledError`).
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
    super(`the download broke after ${delivered} bytes were delivered and was not resumed: ${detail}`, options);
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
const LENGTH = /^\d+$/;

/** The first answer's validator, or why it cannot be resumed. */
function validatorOf(headers: Headers): Validator | Refusal {
  const etag = headers.get('etag')?.trim();
  if (etag === undefined || etag === '') return ['noETag', 'the first answer had no ETag (a resume needs a strong one to send in If-Range)'];
  if (etag.startsWith('W/')) return ['weakETag', `the first answer's ETag ${etag} is weak (If-Range needs a strong validator, RFC 9110 §13.1.5)`];
  const ranges = headers.get('accept-ranges');
  if (ranges === null || !ranges.toLowerCase().split(',').some((unit) => unit.trim() === 'bytes')) {
    return ['noAcceptRanges', `the first answer did not send Accept-Ranges: bytes${ranges === null ? '' : ` (it sent ${ranges})`}`];
  }
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return ['encoded', `the first answer is Content-Encoding: ${encoding} (the caller got decoded bytes; a range counts encoded ones)`];
  }
  const length = headers.get('content-length')?.trim();
  return { etag, total: length !== undefined && LENGTH.test(length) ? Number(length) : undefined };
}

/** Why the answer to a resume request from `offset` cannot be appended, or `undefined` when it can. */
function refusalOf(answer: Response, offset: number, validator: Validator): Refusal | undefined {
  const etag = answer.headers.get('etag')?.trim();
  if ((answer.status === 200 || answer.status === 206) && etag !== undefined && etag !== validator.etag) {
    return ['changed', `the representation changed (ETag ${validator.etag}, now ${etag}; answered ${answer.status})`];
  }
  if (answer.status === 200) return ['rangeIgnored', `the server answered 200 to Range: bytes=${offset}- (it ignores ranges): the whole body again cannot be appended`];
  if (answer.status !== 206) return ['failedAnswer', `the resume request (Range: bytes=${offset}-) was answered ${answer.status}`];
  const header = answer.headers.get('content-range') ?? '';
  const range = CONTENT_RANGE.exec(header.trim());
  const said = `Content-Range: ${header === '' ? '(none)' : header} to Range: bytes=${offset}-`;
  if (range === null) return ['wrongRange', `the server answered 206 with ${said}`];
  const [, first, last, size] = range;
  if (Number(first) !== offset) return ['wrongRange', `the server answered 206 with ${said}, not starting at byte ${offset}`];
  const total = size === '*' ? undefined : Number(size);
  if (total !== undefined && validator.total !== undefined && total !== validator.total) {
    return ['wrongRange', `the server answered 206 with ${said}, a length other than the first answer's ${validator.total}`];
  }
  const end = total ?? validator.total;
  if (end !== undefined && Number(last) !== end - 1) return ['wrongRange', `the server answered 206 with ${said}, stopping short of byte ${end - 1}`];
  const encoding = answer.headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') return ['wrongRange', `the server answered 206 with Content-Encoding: ${encoding}`];
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
}

/**
 * `response` (a 200 to a GET) whose body, when it breaks or stalls after some bytes reached the
 * caller, carries on from where delivery stopped (DESIGN §5 `resumeDownloads`): only when the first
 * answer had a strong `ETag` and `Accept-Ranges: bytes` and no `Content-Encoding`, and only with a
 * 206 of the same `ETag` whose `Content-Range` starts exactly at the bytes delivered and runs to the
 * end of the first answer's length. Anything else fails the read with {@link ResumeRefusedError}
 * rather than splice; a resume the policy refuses (no attempt left, budget, breaker, deadline) fails
 * it with the call's own error. The call stays open for its observer (`options.held`) until the body
 * ends, is cancelled or fails, or the response is garbage-collected unread.
 */
export function resumableResponse(response: Response, options: ResumableOptions): Response {
  const body = response.body;
  if (body === null) {
    options.held.end();
    return response;
  }
  const stream = new ReadableStream<Uint8Array>(new ResumableSource(body, validatorOf(response.headers), options), { highWaterMark: 0 });
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

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly validator: Validator | Refusal,
    private readonly options: ResumableOptions,
  ) {
    this.reader = this.bounded(body);
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await this.reader.read();
      } catch (error) {
        if (this.ended) return;
        let rest: ReadableStream<Uint8Array>;
        try {
          rest = await this.resume(error);
        } catch (failure) {
          // The caller's stream errors with it. A refusal to splice fails the call; the policy's own
          // refusal of the resume already ended it; a caller's abort leaves it as it was accepted.
          this.options.held.end(failure instanceof ResumeRefusedError ? failure : undefined);
          throw failure;
        }
        this.reader = this.bounded(rest);
        continue;
      }
      if (this.ended) return;
      if (result.done) {
        controller.close();
        this.options.held.end();
      } else {
        this.delivered += result.value.byteLength;
        controller.enqueue(result.value);
      }
      return;
    }
  }

  cancel(reason: unknown): Promise<void> {
    this.ended = true;
    this.options.held.end();
    return this.reader.cancel(reason);
  }

  /** The rest of the body from the bytes delivered, as a checked 206's body; throws why not. */
  private async resume(error: unknown): Promise<ReadableStream<Uint8Array>> {
    if (this.options.signal?.aborted === true) throw error;
    const validator = this.validator;
    if (Array.isArray(validator)) throw new ResumeRefusedError(validator[0], this.delivered, validator[1], { cause: error });
    const { etag } = validator as Validator;
    const answer = await this.options.next(this.delivered, etag, error);
    const refusal = refusalOf(answer, this.delivered, validator as Validator);
    if (refusal !== undefined || answer.body === null) {
      discard(answer);
      const [reason, detail] = refusal ?? ['wrongRange', 'the server answered 206 without a body'];
      throw new ResumeRefusedError(reason, this.delivered, detail, { cause: error });
    }
    this.options.resumed(answer);
    return answer.body;
  }

  private bounded(body: ReadableStream<Uint8Array>): ReadableStreamDefaultReader<Uint8Array> {
    const gap = this.options.gap;
    return (gap === undefined ? body : gapBoundedStream(body, gap, this.options.clock, this.delivered)).getReader();
  }
}
