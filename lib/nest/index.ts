/**
 * `@nresilience/nestjs`: the Nest layer (module, registry, decorators, exception filter) plus the whole
 * core (policy values, executor, budget, backoff, errors, clock), so applications import from one place.
 *
 * @module @nresilience/nestjs
 */
export * from '../core/index.js';
export { AttemptSignal } from './attempt-signal.decorator.js';
// The decorator carries the core's level names and helpers, so it takes the name over from core's export.
export { Criticality } from './criticality.decorator.js';
export { getPolicyToken, InjectPolicy } from './inject-policy.decorator.js';
export {
  type BackoffConfig,
  type BreakerConfig,
  type BreakerDurationKey,
  type BudgetConfig,
  type BudgetPlan,
  type DurationConfig,
  type ParsedResilienceConfig,
  type PolicyConfig,
  type PolicyPlan,
  PRESET_NAMES,
  type PresetName,
  presetPolicy,
  type ResilienceConfig,
  type ScopeConfig,
  parseDuration,
  parseResilienceConfig,
} from '../config/policy-config.js';
export { PolicyHandle, type PolicySource } from './policy-handle.js';
export { PolicyRegistry } from './policy-registry.js';
export { ResilienceConfigError } from '../config/resilience-config.error.js';
export type {
  ResolvedBackoffConfig,
  ResolvedClassifierConfig,
  ResolvedPolicyConfig,
} from '../config/describe-policy.js';
export { ConfigFileError, type ConfigFileProblem, readConfigFile } from '../config/config-file.js';
export {
  ConfigFileSource,
  type ConfigFileSourceOptions,
  DEFAULT_CONFIG_DEBOUNCE_MS,
} from '../config/config-file-source.js';
export {
  type ConfigChanges,
  type ConfigServiceLike,
  ResilienceConfigSource,
} from './resilience-config-source.js';
export type { ReloadCounts, ReloadEvent, ReloadListener, ReloadTrigger } from './reload-event.js';
export {
  PROBLEM_JSON,
  ProblemTypes,
  ResilienceBadGatewayFilter,
  ResilienceExceptionFilter,
  type ResilienceAnswer,
  type ResilienceProblem,
  type ResilienceProblemOptions,
} from './resilience-exception.filter.js';
export {
  type GrpcRefusal,
  grpcRefusalAnswer,
  type InboundMetadata,
} from './grpc-refusal-answer.js';
export { httpExceptionFrom } from './http-exception-from.js';
export { ResilienceRpcContextInterceptor } from './resilience-rpc-context.interceptor.js';
export type {
  ResilienceForRootAsyncOptions,
  ResilienceForRootOptions,
} from './resilience-module-definition.js';
export type {
  ModuleLoggingOption,
  ModuleTelemetryOption,
  ResilienceModuleExtras,
  ResilienceModuleOptions,
} from './resilience-module-options.interface.js';
export { ResilienceModule } from './resilience.module.js';
export { ShutdownGrace } from './shutdown-grace.js';
export type { ShutdownOptions } from './resilience-module-options.interface.js';
export type { ModuleRedisOption } from './module-rate-store.js';
export {
  ATTEMPT_SIGNAL_METADATA,
  CRITICALITY_METADATA,
  INJECT_POLICY_METADATA,
  RESILIENCE_MODULE_OPTIONS,
  RESILIENT_POLICY_METADATA,
} from './resilience.constants.js';
export { Resilient, type ResilientOptions } from './resilient.decorator.js';
export type { ResilientClassifier } from './method-classifier.js';
export { WARNING_LOGGER_CONTEXT, nestWarningSink } from './nest-warnings.js';
export {
  RESILIENCE_CONTEXT_OPTIONS,
  type RawRequest,
  type RawResponse,
  ResilienceContextMiddleware,
  type ResilienceContextOptions,
} from './resilience-context.middleware.js';
export type {
  ClassifierBase,
  ClassifierConfig,
  ClassifierRulesConfig,
  ClassifierSpec,
} from '../config/classifier-config.js';
export { ResilienceContextModule } from './resilience-context.module.js';
export { UnknownPolicyError } from './unknown-policy.error.js';
export {
  LOGGER_CONTEXT_PREFIX,
  NestResilienceLogger,
  PolicyInstrumentation,
  RESILIENCE_INSTRUMENTATION,
} from './resilience-instrumentation.js';
// The logging listener is free of OpenTelemetry: it is part of the root entry. Metrics and spans are
// in `@nresilience/nestjs/telemetry`, loaded by ResilienceModule only when `@opentelemetry/api` is installed.
export {
  LoggingListener,
  type LoggingOptions,
  type LoggingProfile,
  LogSampling,
  type ResilienceLogger,
  type ResilienceLogLevel,
  withLogging,
} from '../telemetry/logging-listener.js';
