import type { Metadata, StatusObject } from '@grpc/grpc-js';
import { GrpcStatus } from '../core/index.js';

const CODE_NAMES = Object.fromEntries(
  Object.entries(GrpcStatus).map(([name, code]) => [code, name]),
) as Record<number, string>;

/** The name of a status code (`UNAVAILABLE` for 14), `undefined` for a code gRPC does not define. */
export function grpcCodeName(code: number): string | undefined {
  return CODE_NAMES[code];
}

/**
 * One attempt of a gRPC call ended with a non-OK status. Thrown inside the policy so
 * `Classifier.grpc` can read it (`code`, `details`, trailers in `metadata`); the caller receives
 * the status itself (a grpc-js `ServiceError`), never this class.
 */
export class GrpcStatusError extends Error {
  override readonly name = 'GrpcStatusError';
  /** The status code (grpc-js `status`). */
  readonly code: number;
  /** The status message. */
  readonly details: string;
  /** The trailers that came with the status. */
  readonly metadata: Metadata;

  /**
   * @param status the status the attempt ended with
   * @param headers the response headers the attempt received before failing, if any
   */
  constructor(
    readonly status: StatusObject,
    readonly headers: Metadata | undefined,
  ) {
    super(`${status.code} ${grpcCodeName(status.code) ?? 'UNKNOWN'}: ${status.details}`);
    this.code = status.code;
    this.details = status.details;
    this.metadata = status.metadata;
  }
}

/** Our caller cancelled the call (`call.cancel()`); carries the status it asked for. */
export class GrpcCallCancelledError extends Error {
  override readonly name = 'GrpcCallCancelledError';
  /**
   * @param code the status the caller cancelled with (grpc-js uses CANCELLED)
   * @param details its message
   */
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`call cancelled by the caller: ${details}`);
  }
}
