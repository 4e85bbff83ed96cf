import { GrpcStatus, grpcStatusOf } from './grpc-status.js';

// How a failure is named in a line a person reads: the exception filter's 502 warning and the
// breaker's opening record (`last: ECONNREFUSED`).

/** gRPC status names by code (`UNAVAILABLE` for 14). */
const GRPC_CODE_NAMES = Object.fromEntries(
  Object.entries(GrpcStatus).map(([name, code]) => [code, name]),
) as Record<number, string>;

/**
 * The short cause of a transport failure: a socket code found on the error or its cause (undici's
 * `TypeError: fetch failed` carries it on `cause`), an HTTP status on an attached `response`, the name
 * of the gRPC status the error carries (`UNAVAILABLE`, as `grpcStatusOf` reads it), else the error's
 * name. The exception filter's line and the breaker's opening line both name a failure by it. @internal
 */
export function failureCause(error: unknown): string {
  if (typeof error !== 'object' || error === null) return typeof error;
  const status = (error as { response?: { status?: unknown } }).response?.status;
  if (typeof status === 'number') return `HTTP ${status}`;
  const grpc = grpcStatusOf(error);
  if (grpc !== undefined) return GRPC_CODE_NAMES[grpc.code]!;
  for (
    let at: unknown = error, depth = 0;
    typeof at === 'object' && at !== null && depth < 4;
    at = (at as { cause?: unknown }).cause, depth++
  ) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
  }
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' && name.length > 0 ? name : 'Error';
}
