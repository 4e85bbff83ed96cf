import type { ArgumentsHost } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';
import { AttemptTimeoutError, CallRejectedError, DeadlineExceededError, GrpcStatus, PUSHBACK_METADATA } from '../core/index.js';

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
 * context is not gRPC (another microservice transport) or the error is not a refusal:
 * `CallRejectedError` → UNAVAILABLE with `grpc-retry-pushback-ms` = its `retryAfter` rounded up to
 * whole ms (none when unknown), so a gRPC client waits as long as the break or the budget asks
 * (gRFC A6); `DeadlineExceededError` and a final `AttemptTimeoutError` → DEADLINE_EXCEEDED.
 * The trailers are built with the inbound metadata's own class, so the answer needs no grpc-js import
 * and is always the copy of grpc-js the server runs.
 * @param exception the error the handler threw
 * @param host the RPC arguments host (`[data, metadata, call]` for gRPC)
 */
export function grpcRefusalAnswer(exception: unknown, host: ArgumentsHost): Observable<never> | undefined {
  const inbound = host.switchToRpc().getContext<unknown>();
  if (!isMetadata(inbound)) return undefined;
  const trailers = new (inbound.constructor as new () => InboundMetadata & { set(key: string, value: string): void })();
  let code: number;
  if (exception instanceof CallRejectedError) {
    code = GrpcStatus.UNAVAILABLE;
    const retryAfter = exception.retryAfter;
    if (retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0) trailers.set(PUSHBACK_METADATA, String(Math.ceil(retryAfter)));
  } else if (exception instanceof DeadlineExceededError || exception instanceof AttemptTimeoutError) {
    code = GrpcStatus.DEADLINE_EXCEEDED;
  } else return undefined;
  const refusal: GrpcRefusal = { code, details: exception.message, metadata: trailers };
  return throwError(() => refusal);
}

function isMetadata(value: unknown): value is InboundMetadata {
  return typeof value === 'object' && value !== null && typeof (value as InboundMetadata).get === 'function' && typeof (value as InboundMetadata).getMap === 'function';
}
