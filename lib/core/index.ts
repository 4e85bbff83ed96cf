/**
 * `@nresilience/nestjs/core`: the framework-free engine — policy values and the flat executor, retry budget, breaker,
 * backoff, classifiers, deadlines, scopes, events, errors and clocks. Node built-ins only.
 *
 * @module @nresilience/nestjs/core
 */
export * from './backoff/backoff.js';
export * from './backoff/jitter.js';
export * from './classification/classifier.js';
export * from './classification/grpc-status.js';
export { REFUSAL_METADATA } from './classification/relayed-refusal.js';
export * from './time/clock.js';
export * from './time/manual-clock.js';
export * from './time/fake-clock.js';
export * from './errors.js';
export {
  ResilienceWarningCodes,
  type ResilienceWarningCode,
  setWarningSink,
  type WarningSink,
} from './diagnostics/warnings.js';
export * from './events/call-events.js';
export { HeldCall, type HeldCallSource } from './execution/held-call.js';
export * from './classification/verdict.js';
export * from './budget/retry-budget.js';
export {
  Admission,
  type BreakerSnapshot,
  type BreakerState,
  type BreakerTransitionListener,
  type BreakerTrip,
  type BreakerTripCause,
} from './breaker/breaker-state.js';
export { CircuitBreaker, type BreakerDeps } from './breaker/circuit-breaker.js';
export * from './breaker/breaker-settings.js';
export { Breaker } from './breaker/breaker-value.js';
export * from './classification/retry-after.js';
export type { AttemptContext } from './execution/attempt-context.js';
export type { AttemptRecord, CallResult } from './execution/call-result.js';
export { type CallContinuation, GUARDED_PAUSE_MS, type Work } from './execution/executor.js';
export { sleep } from './time/sleep.js';
export { DEFAULT_OPTIONS, type PolicyOptions } from './policy/policy-options.js';
export {
  type ExecutablePolicy,
  type ResolvedPolicyOptions,
} from './execution/executable-policy.js';
export {
  Policy,
  type PolicyState,
  Resilience,
  type RunOptions,
  type Streamed,
} from './policy/policy.js';
export { ProtectedStream } from './streams/protected-stream.js';
export { type ResolvedBackoffConfig, describeBackoff } from './backoff/describe-backoff.js';
export {
  type ExplainedTerm,
  PolicyExplanation,
  type ReadingState,
  explainPolicy,
} from './policy/explain.js';
export { type CheckpointedSource, CheckpointedStream } from './policy/checkpointed-stream.js';
export { type ObservableLike, type StreamSource, isStreamSource } from './streams/stream-source.js';
export * from './policy/policy-scope.js';
export {
  type KeyedFamily,
  type KeyedPolicySource,
  isKeyedPolicySource,
} from './policy/keyed-source.js';
export {
  Ambient,
  type AmbientChanges,
  type AmbientState,
  Criticality,
} from './ambient/ambient-context.js';
export {
  AmbientHeaders,
  MAXIMUM_WIRE_REMAINING_MS,
  ambientFromHeaders,
  parseRemainingMs,
} from './ambient/ambient-wire.js';
export * from './budget/sliding-window-budget.js';
export * from './classification/http-classifier.js';
export { Drain } from './signals/drain.js';
export { stopReasonOf } from './execution/stop-reasons.js';
export {
  type CallEventSink,
  type CallObserver,
  breakerTransitionReporter,
  composeObservers,
  reportEvent,
  storeStateReporter,
  toObserver,
} from './execution/observer.js';
export { AmbientCriticality } from './ambient/ambient-criticality.js';
export { Limit, type LimitConfig, type Limiter } from './limits/limit-value.js';
export {
  RateLimiter,
  type RateLimiterContext,
  type RateLimiterSnapshot,
  type SharedRateSnapshot,
} from './limits/rate-limiter.js';
export { STORE_PROBE_INTERVAL_MS, type StoreStateListener } from './limits/leased-rate.js';
export {
  type RateLimitOptions,
  type ResolvedRateSettings,
  MAXIMUM_RATE,
  RATE_DEFAULTS,
} from './limits/rate-settings.js';
export type { RateGrant, RateStore, RateTake } from './limits/rate-store.js';
export { Hedge } from './hedging/hedge-value.js';
export { RecentLatency } from './estimators/recent-latency.js';
export {
  AttemptCeiling,
  type AttemptCeilingOptions,
  type ResolvedCeilingSettings,
  CEILING_DEFAULTS,
} from './estimators/attempt-ceiling.js';
export {
  MeasuredLatency,
  MEASURED_WINDOW_MS,
  MEASURED_WARM_SAMPLES,
  CEILING_WARM_SAMPLES,
  CEILING_STANDS_ASIDE_AT,
  CEILING_RESUMES_AT,
} from './estimators/measured-latency.js';
export type { MeasuredReadings } from './policy/measured-readings.js';
export { HedgeState } from './hedging/hedge-state.js';
export {
  type HedgeConfig,
  type HedgeOptions,
  type ResolvedHedgeSettings,
} from './hedging/hedge-settings.js';
export {
  ConcurrencyLimiter,
  type LimiterSnapshot,
  SlotOutcome,
} from './limits/concurrency-limiter.js';
export type { AdaptiveBounds } from './limits/adaptive-limit.js';
export {
  type AdaptiveLimitOptions,
  type ConcurrencyLimitOptions,
  type ResolvedConcurrencySettings,
  type ResolvedLimitSettings,
  ADAPTIVE_DEFAULTS,
  MAXIMUM_LIMIT,
} from './limits/limit-settings.js';
export { QueueExit } from './limits/limit-queue.js';
export type { CallQuota } from './limits/call-quota.js';
export {
  type DelaySource,
  EventLoopProbe,
  SATURATION_FLOOR_MS,
  Saturation,
} from './limits/saturation.js';
export {
  FALLBACK_REASONS,
  Fallback,
  type FallbackFunction,
  type FallbackOptions,
  type FallbackStop,
} from './fallback/fallback.js';
