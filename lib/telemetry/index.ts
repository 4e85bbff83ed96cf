/**
 * `@nresilience/nestjs/telemetry`: OpenTelemetry metrics and spans for policies, and the logging
 * listener (DESIGN §7). Needs `@opentelemetry/api` (an optional peer dependency of the package).
 * Importing it adds `policy.withTelemetry()` and `policy.withLogging()` to `Policy`.
 *
 * ```ts
 * import { Resilience } from '@nresilience/nestjs';
 * import '@nresilience/nestjs/telemetry';
 *
 * const payments = Resilience.http.with({ name: 'payments' }).withTelemetry();
 * ```
 */
import { installPolicyMethods } from './policy-methods.js';

installPolicyMethods();

export {
  INCIDENT_WINDOW_MS,
  LoggingListener,
  type LoggingOptions,
  type LoggingProfile,
  LogSampling,
  REPEAT_WINDOW_MS,
  type ResilienceLogger,
  type ResilienceLogLevel,
  describeEvent,
  withLogging,
} from './logging-listener.js';
export {
  BREAKER_STATE_VALUES,
  CALL_DURATION_BUCKETS_MS,
  INSTRUMENTATION_NAME,
  MetricNames,
  ResilienceTelemetry,
  TelemetryAttributes,
  type TelemetryOptions,
  withTelemetry,
} from './otel-telemetry.js';
