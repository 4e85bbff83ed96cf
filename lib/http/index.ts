/**
 * `@nresilience/nestjs/http`: outbound HTTP under a resilience policy (DESIGN §5) — the resilient
 * `fetch`, per-host state, idempotency keys, replayable bodies, published quota, and the Nest module.
 * `@nestjs/axios` and `axios` are optional: nothing here loads them until the HttpService seam is used.
 *
 * @module @nresilience/nestjs/http
 */
export {
  type FetchFunction,
  type ResilientFetch,
  type ResilientFetchOptions,
  createResilientFetch,
} from './resilient-fetch.js';
export { DEFAULT_MAXIMUM_HOSTS, HostPolicies, type PolicySourceLike } from './host-policies.js';
export { CallFacts } from '../outbound/call-facts.js';
export {
  IDEMPOTENCY_KEY_HEADER,
  NotRepeatableError,
  isIdempotentMethod,
  markRepeatable,
} from './idempotency.js';
export { HostQuota, Quota } from './quota.js';
export { BodyNotReplayableError, DEFAULT_MAXIMUM_REPLAY_BYTES } from './request-body.js';
export { ResumeRefusedError, type ResumeRefusal } from './resume-download.js';
export { BodyLengthError } from './body-length.js';
export {
  AxiosNotRepeatableError,
  type ResilientAxiosOptions,
  installResilientAdapter,
} from './axios-adapter.js';
export {
  InjectResilientFetch,
  ResilientHttpModule,
  type ResilientHttpModuleOptions,
  getResilientFetchToken,
  getResilientHttpServiceToken,
} from './resilient-http.module.js';
