import { RelayedRefusalError, parseRetryAfter } from '../core/index.js';
import { relayedReasonOf } from '../core/internal.js';

/**
 * The problem type of a refusal by one of our own services (`ResilienceExceptionFilter`'s
 * `ProblemTypes.callRejected`): the wire contract between hops, so it is spelled here too.
 */
export const CALL_REJECTED_PROBLEM_TYPE = 'urn:nresilience:problem:call-rejected';

/** A problem body longer than this is not ours (ours are a few hundred bytes): it is not read further. */
const MAXIMUM_PROBLEM_BYTES = 4096;

/**
 * The refusal a lower hop answered, when `answer` is one: a 503 `application/problem+json` whose
 * `type` is {@link CALL_REJECTED_PROBLEM_TYPE} and whose `reason` is a refusal reason, with its
 * `Retry-After` as the hint. Reads at most 4 KiB of a copy of the body; anything else (another
 * status, another media type or problem type, a body that is not JSON or too long) is `undefined`
 * and `answer` stays untouched for the caller.
 * @param origin the dependency's origin, for the error
 * @param nowEpochMs wall-clock ms, for a `Retry-After` given as a date
 */
export async function relayedRefusal(
  answer: Response,
  origin: string,
  nowEpochMs: () => number,
): Promise<RelayedRefusalError | undefined> {
  const header = (name: string) => answer.headers.get(name) ?? undefined;
  if (!mayBeRefusal(answer.status, header) || answer.body === null) return undefined;
  const text = await readAtMost(answer.clone().body!, MAXIMUM_PROBLEM_BYTES);
  return text === undefined
    ? undefined
    : refusalOf(text, header('retry-after'), origin, nowEpochMs);
}

/**
 * {@link relayedRefusal} for an answer already read (the axios seam's `response`): `status`, a header
 * reader and `data` as the client parsed it (an object, or the text or bytes when it did not).
 * @param header a response header's value by its lower-case name, `undefined` when absent
 */
export function relayedRefusalOf(
  status: number,
  header: (name: string) => unknown,
  data: unknown,
  origin: string,
  nowEpochMs: () => number,
): RelayedRefusalError | undefined {
  if (!mayBeRefusal(status, header)) return undefined;
  const body = Buffer.isBuffer(data)
    ? data.toString('utf8')
    : data instanceof ArrayBuffer
      ? Buffer.from(data).toString('utf8')
      : data;
  if (typeof body === 'string' && body.length > MAXIMUM_PROBLEM_BYTES) return undefined;
  return refusalOf(body, header('retry-after'), origin, nowEpochMs);
}

/** A 503 problem+json no longer than ours ever are: the only answers worth reading as a refusal. */
function mayBeRefusal(status: number, header: (name: string) => unknown): boolean {
  if (status !== 503) return false;
  const type = header('content-type');
  if (typeof type !== 'string' || !type.toLowerCase().startsWith('application/problem+json'))
    return false;
  return !(Number(header('content-length') ?? 0) > MAXIMUM_PROBLEM_BYTES);
}

/** The refusal `problem` (parsed, or JSON text) names, with `retryAfter` as its hint; else `undefined`. */
function refusalOf(
  problem: unknown,
  retryAfter: unknown,
  origin: string,
  nowEpochMs: () => number,
): RelayedRefusalError | undefined {
  if (typeof problem === 'string') {
    try {
      problem = JSON.parse(problem);
    } catch {
      return undefined;
    }
  }
  const { type, reason } = (problem ?? {}) as { type?: unknown; reason?: unknown };
  const relayed = relayedReasonOf(reason);
  if (type !== CALL_REJECTED_PROBLEM_TYPE || relayed === undefined) return undefined;
  return new RelayedRefusalError(relayed, parseRetryAfter(retryAfter, nowEpochMs()), origin);
}

/** The stream's text when it ends within `limit` bytes; `undefined` (the stream cancelled) past it or on an error. */
async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<string | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(value);
    }
  } catch {
    return undefined;
  }
  return Buffer.concat(chunks).toString('utf8');
}
