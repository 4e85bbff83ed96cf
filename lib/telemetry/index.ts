/**
 * `@nresilience/nestjs/telemetry`: OpenTelemetry metrics and spans for policies, and the logging
 * listener (DESIGN §7), both observers of the core's one telemetry seam (`CallObserver`). Needs
 * `@opentelemetry/api` (an optional peer dependency of the package). Importing it has no side effects.
 *
 * ```ts
 * import { Resilience } from '@nresilience/nestjs';
 * import { withTelemetry } from '@nresilience/nestjs/telemetry';
 *
 * const payments = withTelemetry(Resilience.http.with({ name: 'payments' }));
 * ```
 *
 * @module @nresilience/nestjs/telemetry
 */

export {
  INCIDENT_WINDOW_MS,
  LoggingListener,
  type LoggingOptions,
  type LoggingProfile,
  LogSampling,
  MAXIMUM_REPEAT_WINDOWS,
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
