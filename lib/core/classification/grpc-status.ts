import { Verdict } from './verdict.js';

/**
 * gRPC status codes (the numbers of the gRPC spec's `statuscodes.md`, the same as grpc-js `status`),
 * kept here so classification and the Nest layer need no grpc-js import.
 */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** The trailer a gRPC server uses to say how long to wait before retrying (gRFC A6), in ms. */
export const PUSHBACK_METADATA = 'grpc-retry-pushback-ms';

/** The parts of a gRPC failure a classifier reads: grpc-js `ServiceError`, a status object, `RpcException`. */
export interface GrpcStatusLike {
  readonly code: number;
  readonly details: string;
  readonly metadata: { get(key: string): unknown[] } | undefined;
}

/**
 * The gRPC status carried by `error`, or `undefined` when it carries none: an object whose `code` is
 * an integer 0..16 (grpc-js `ServiceError`, a `StatusObject`), or a Nest `RpcException` whose
 * `getError()` is one. Node system errors (string codes such as `ECONNRESET`) are not statuses.
 * @param error any thrown value
 */
export function grpcStatusOf(error: unknown): GrpcStatusLike | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const direct = asStatus(error);
  if (direct !== undefined) return direct;
  const getError = (error as { getError?: unknown }).getError;
  return typeof getError === 'function' ? asStatus(getError.call(error)) : undefined;
}

function asStatus(value: unknown): GrpcStatusLike | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { code, details, message, metadata } = value as {
    code?: unknown;
    details?: unknown;
    message?: unknown;
    metadata?: unknown;
  };
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 16)
    return undefined;
  const readable =
    metadata !== null &&
    typeof metadata === 'object' &&
    typeof (metadata as { get?: unknown }).get === 'function';
  return {
    code,
    details: typeof details === 'string' ? details : typeof message === 'string' ? message : '',
    metadata: readable ? (metadata as GrpcStatusLike['metadata']) : undefined,
  };
}

/**
 * The server's pushback (gRFC A6): ms to wait when `grpc-retry-pushback-ms` is a non-negative integer;
 * `'stop'` when it is present but negative or unparsable (A6: the client must not retry then);
 * `undefined` when absent. Only the first value counts; a value that reads but is not a string or
 * Buffer is unparsable.
 * @param metadata response trailers (grpc-js `Metadata` or anything with `get(key)` returning values)
 */
export function readPushback(metadata: GrpcStatusLike['metadata']): number | 'stop' | undefined {
  let values: unknown[];
  try {
    values = metadata?.get(PUSHBACK_METADATA) ?? [];
  } catch {
    return undefined;
  }
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const raw = values[0];
  const text =
    typeof raw === 'string'
      ? raw.trim()
      : Buffer.isBuffer(raw)
        ? raw.toString('latin1').trim()
        : undefined;
  if (text === undefined || !/^\d+$/.test(text)) return 'stop';
  const ms = Number(text);
  return Number.isSafeInteger(ms) ? ms : 'stop';
}

// Statuses grpc-js makes up itself for deterministic local failures: retrying cannot change them.
const LOCAL_RESOURCE_EXHAUSTED = /message larger than max/i;
const LOCAL_INTERNAL = /^Request message serialization failure/;

const TRANSIENT_CODES: ReadonlySet<number> = new Set([
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.ABORTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
]);

/**
 * The gRPC rule of `Classifier.grpc` (DESIGN §6, gRFC A6):
 * - UNAVAILABLE, INTERNAL, UNKNOWN, ABORTED, DEADLINE_EXCEEDED (an attempt's) → Transient;
 * - RESOURCE_EXHAUSTED from the server → Throttled, with `grpc-retry-pushback-ms` as the wait when sent;
 * - any of those with a valid pushback → Throttled with it (the server timed the retry); with a
 *   negative or unparsable pushback → Permanent (A6: do not retry);
 * - CANCELLED → Permanent (our caller cancelled, or the server chose to stop this call);
 * - every other status (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED,
 *   UNAUTHENTICATED, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED, DATA_LOSS) is an answer →
 *   Permanent: not retried, never evidence against the dependency;
 * - grpc-js's own message-size RESOURCE_EXHAUSTED and request serialization INTERNAL → Permanent.
 * Errors without a gRPC status are left to the next rule. A `ClassifierRule` (its outcome type is
 * spelled out so this file imports nothing of the classifier, which imports it).
 */
export function grpcStatusRule(outcome: {
  readonly ok: boolean;
  readonly error?: unknown;
}): Verdict | undefined {
  if (outcome.ok) return undefined;
  const status = grpcStatusOf(outcome.error);
  if (status === undefined || status.code === GrpcStatus.OK) return undefined;
  const { code, details } = status;
  const exhausted = code === GrpcStatus.RESOURCE_EXHAUSTED;
  if (exhausted && LOCAL_RESOURCE_EXHAUSTED.test(details)) return Verdict.permanent;
  if (code === GrpcStatus.INTERNAL && LOCAL_INTERNAL.test(details)) return Verdict.permanent;
  if (!exhausted && !TRANSIENT_CODES.has(code)) return Verdict.permanent;
  const pushback = readPushback(status.metadata);
  if (pushback === 'stop') return Verdict.permanent;
  if (pushback !== undefined) return Verdict.throttled(pushback);
  return exhausted ? Verdict.throttled() : Verdict.transient;
}
