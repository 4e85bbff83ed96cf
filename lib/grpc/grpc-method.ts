/** A gRPC method as the interceptor sees it: parts of its path `/package.Service/Method`. */
export interface GrpcMethod {
  /** The full path, `/package.Service/Method`. */
  readonly path: string;
  /** The fully qualified service name, `package.Service`. */
  readonly service: string;
  /** The method name, `Method`. */
  readonly method: string;
  /** `package.Service/Method` (how `repeatable` names a single method). */
  readonly qualified: string;
  /** True for client-streaming and bidi methods. */
  readonly requestStream: boolean;
  /** True for server-streaming and bidi methods. */
  readonly responseStream: boolean;
}

/**
 * Splits a method path (`/package.Service/Method`). A path without the service part (not produced by
 * grpc-js clients) keeps the whole path as the service, so it still gets state of its own.
 */
export function grpcMethodOf(
  path: string,
  requestStream: boolean,
  responseStream: boolean,
): GrpcMethod {
  const trimmed = path.startsWith('/') ? path.slice(1) : path;
  const slash = trimmed.lastIndexOf('/');
  const service = slash > 0 ? trimmed.slice(0, slash) : trimmed;
  const method = slash > 0 ? trimmed.slice(slash + 1) : '';
  return { path, service, method, qualified: trimmed, requestStream, responseStream };
}
