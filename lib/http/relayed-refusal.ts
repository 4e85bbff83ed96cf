import { type RejectionReason, RelayedRefusalError, parseRetryAfter } from '../core/index.js';

/**
 * The problem type of a refusal by one of our own services (`ResilienceExceptionFilter`'s
 * `ProblemTypes.callRejected`): the wire contract between hops, so it is spelled here too.
 */
export const CALL_REJECTED_PROBLEM_TYPE = 'urn:nresilience:problem:call-rejected';

/** A problem body longer than this is not ours (ours are a few hundred bytes): it is not read further. */
const MAXIMUM_PROBLEM_BYTES = 4096;
const REASONS: readonly RejectionReason[] = [
  'BudgetExhausted',
  'DependencyUnavailable',
  'RateLimited',
  'QuotaExhausted',
];

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
  if (answer.status !== 503 || answer.body === null) return undefined;
  const type = answer.headers.get('content-type');
  if (type === null || !type.toLowerCase().startsWith('application/problem+json')) return undefined;
  const length = Number(answer.headers.get('content-length') ?? 0);
  if (length > MAXIMUM_PROBLEM_BYTES) return undefined;
  const text = await readAtMost(answer.clone().body!, MAXIMUM_PROBLEM_BYTES);
  if (text === undefined) return undefined;
  let problem: unknown;
  try {
    problem = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { type: problemType, reason } = (problem ?? {}) as { type?: unknown; reason?: unknown };
  if (problemType !== CALL_REJECTED_PROBLEM_TYPE || !REASONS.includes(reason as RejectionReason))
    return undefined;
  return new RelayedRefusalError(
    reason as RejectionReason,
    parseRetryAfter(answer.headers.get('retry-after'), nowEpochMs()),
    origin,
  );
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
