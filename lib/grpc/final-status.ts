import { Metadata, type StatusObject } from '@grpc/grpc-js';
import {
  AttemptTimeoutError,
  CallRejectedError,
  DeadlineExceededError,
  GrpcStatus,
  PUSHBACK_METADATA,
  REFUSAL_METADATA,
} from '../core/index.js';
import { relayedReasonOf } from '../core/internal.js';
import { GrpcCallCancelledError, GrpcStatusError } from './grpc-status.error.js';

/**
 * The status a client receives for a call that ended with `error`: an attempt's own status as it
 * came; a refusal (of this process's retry budget or breaker, or relayed from a service below) as
 * UNAVAILABLE with `grpc-retry-pushback-ms` (its `retryAfter`, when known) and `x-nresilience-refusal`
 * (its reason) as trailers; a deadline or attempt
 * timeout as DEADLINE_EXCEEDED; the caller's cancellation as the status it asked for; anything else
 * as INTERNAL. The error rides along as `cause` (grpc-js copies the status onto its `ServiceError`),
 * the attempt's `GrpcStatusError` for a status that came from the wire.
 */
export function statusFor(error: unknown): StatusObject {
  if (error instanceof GrpcStatusError) return { ...error.status, cause: error } as StatusObject;
  const status = (code: number, details: string): StatusObject =>
    ({ code, details, metadata: new Metadata(), cause: error }) as StatusObject;
  if (error instanceof CallRejectedError) {
    // As the Nest exception filter answers a refusal: the hint and the reason ride along as trailers.
    const refused = status(GrpcStatus.UNAVAILABLE, error.message);
    const retryAfter = error.retryAfter;
    if (retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0)
      refused.metadata.set(PUSHBACK_METADATA, String(Math.ceil(retryAfter)));
    const reason = relayedReasonOf(error.reason);
    if (reason !== undefined) refused.metadata.set(REFUSAL_METADATA, reason);
    return refused;
  }
  if (error instanceof DeadlineExceededError || error instanceof AttemptTimeoutError)
    return status(GrpcStatus.DEADLINE_EXCEEDED, error.message);
  if (error instanceof GrpcCallCancelledError) return status(error.code, error.details);
  return status(GrpcStatus.INTERNAL, describe(error));
}

/** `reason` in a status's details: an error's name and message, anything else as a string. */
export function describe(reason: unknown): string {
  return reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
}
