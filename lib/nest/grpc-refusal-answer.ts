import type { ArgumentsHost } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';
import {
  AttemptStalledError,
  AttemptTimeoutError,
  CallRejectedError,
  DeadlineExceededError,
  GrpcStatus,
  PUSHBACK_METADATA,
  RateLimitedError,
  REFUSAL_METADATA,
} from '../core/index.js';
import { type DependencyFailure, relayedReasonOf } from '../core/internal.js';
import { findLibraryError } from './library-error.js';

/** The inbound gRPC metadata of an RPC context, as far as answering needs it (no grpc-js import). */
export interface InboundMetadata {
  get(key: string): unknown[];
  getMap(): unknown;
}

/** What Nest's gRPC server hands grpc-js for a failed call: a status (`code`, `details`, trailers). */
export interface GrpcRefusal {
  readonly code: number;
  readonly details: string;
  readonly metadata: InboundMetadata;
}

/**
 * The gRPC answer to one of the library's refusals in an RPC context, or `undefined` when the
 * context is not gRPC (another microservice transport) or the error is not a refusal. The library's
 * error is found wherever it is wrapped (the thrown value or its `cause` chain, e.g. the grpc-js
 * `ServiceError` of an outbound call through the gRPC interceptor; never inside an `HttpException`):
 * `CallRejectedError` (and a local `RateLimitedError`) → UNAVAILABLE with `grpc-retry-pushback-ms` =
 * its `retryAfter` rounded up to whole ms (none when unknown), so a gRPC client waits as long as the
 * break or the budget asks (gRFC A6), and `x-nresilience-refusal` = its reason (not for `Limited`),
 * so the library's client interceptor above passes the refusal up at once (`RelayedRefusalError`); `DeadlineExceededError`, a final `AttemptTimeoutError` and an
 * `AttemptStalledError` → DEADLINE_EXCEEDED; a call of the library's own clients that ended on its
 * dependency's failure (what HTTP answers 502: attempts exhausted, not repeatable, a body that broke)
 * → UNAVAILABLE without a pushback (gRPC's mapping of 502). Anything else is no refusal of ours (Nest's RPC handling answers it).
 * The trailers are built with the inbound metadata's own class, so the answer needs no grpc-js import
 * and is always the copy of grpc-js the server runs.
 * @param exception the error the handler threw
 * @param host the RPC arguments host (`[data, metadata, call]` for gRPC)
 */
export function grpcRefusalAnswer(
  exception: unknown,
  host: ArgumentsHost,
): Observable<never> | undefined {
  return grpcAnswer(exception, host, undefined);
}

/**
 * {@link grpcRefusalAnswer}, telling `onDependencyFailure` the failure when it answers a dependency
 * failure (the exception filter logs it once per window). @internal
 */
export function grpcAnswer(
  exception: unknown,
  host: ArgumentsHost,
  onDependencyFailure: ((failure: DependencyFailure) => void) | undefined,
): Observable<never> | undefined {
  const inbound = host.switchToRpc().getContext<unknown>();
  if (!isMetadata(inbound)) return undefined;
  const trailers = new (
    inbound.constructor as new () => InboundMetadata & { set(key: string, value: string): void }
  )();
  const found = findLibraryError(exception);
  const error = found?.error;
  let code: number;
  if (error instanceof CallRejectedError || error instanceof RateLimitedError) {
    code = GrpcStatus.UNAVAILABLE;
    const retryAfter = error.retryAfter;
    if (retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0)
      trailers.set(PUSHBACK_METADATA, String(Math.ceil(retryAfter)));
    // Tells one of our clients above that this is a refusal to pass up, not a failing service.
    const reason = relayedReasonOf(
      error instanceof CallRejectedError ? error.reason : 'RateLimited',
    );
    if (reason !== undefined) trailers.set(REFUSAL_METADATA, reason);
  } else if (
    error instanceof DeadlineExceededError ||
    error instanceof AttemptTimeoutError ||
    error instanceof AttemptStalledError
  ) {
    code = GrpcStatus.DEADLINE_EXCEEDED;
  } else if (found?.failure !== undefined) {
    code = GrpcStatus.UNAVAILABLE;
    onDependencyFailure?.(found.failure);
    const refusal: GrpcRefusal = {
      code,
      details: `dependency ${found.failure.dependency} failed: ${found.failure.cause}`,
      metadata: trailers,
    };
    return throwError(() => refusal);
  } else return undefined;
  const refusal: GrpcRefusal = { code, details: error.message, metadata: trailers };
  return throwError(() => refusal);
}

function isMetadata(value: unknown): value is InboundMetadata {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as InboundMetadata).get === 'function' &&
    typeof (value as InboundMetadata).getMap === 'function'
  );
}
