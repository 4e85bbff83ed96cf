/**
 * `@nresilience/nestjs/grpc`: resilience for `@grpc/grpc-js` clients (DESIGN §6) — the client
 * interceptor with per-service state, `Classifier.grpc` (re-exported with the core `Classifier`),
 * gRPC status codes and the wire-deadline math. Needs `@grpc/grpc-js` (an optional peer dependency).
 *
 * @module @nresilience/nestjs/grpc
 */
export {
  Classifier,
  GrpcStatus,
  type GrpcStatusLike,
  PUSHBACK_METADATA,
  grpcStatusOf,
  grpcStatusRule,
  readPushback,
} from '../core/index.js';
export { type GrpcMethod, grpcMethodOf } from './grpc-method.js';
export { GrpcCallCancelledError, GrpcStatusError } from './grpc-status.error.js';
export {
  DEFAULT_MAXIMUM_SERVICES,
  type ResilienceInterceptor,
  type ResilienceInterceptorOptions,
  createResilienceInterceptor,
} from './resilience-interceptor.js';
export { statusFor } from './final-status.js';
export { RETRYING_METADATA } from './wire-call.js';
export type { ResumeFrom, ResumeFromOption } from './resume-from.js';
export type { PolicySourceOption } from './service-policies.js';
export { WIRE_DEADLINE_SLACK_MS, wireDeadline } from './wire-deadline.js';
