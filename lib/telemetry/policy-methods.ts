import { Policy } from '../core/policy/policy.js';
import { type LoggingOptions, type ResilienceLogger, withLogging } from './logging-listener.js';
import { type TelemetryOptions, withTelemetry } from './otel-telemetry.js';

declare module '../core/policy/policy.js' {
  interface Policy {
    /**
     * This policy with OpenTelemetry metrics and one span per call attached (see `withTelemetry`).
     * Available once `@nresilience/nestjs/telemetry` has been imported.
     */
    withTelemetry(options?: TelemetryOptions): Policy;
    /**
     * This policy with the logging listener attached (see `withLogging`). Available once
     * `@nresilience/nestjs/telemetry` has been imported.
     */
    withLogging(logger: ResilienceLogger, options?: LoggingOptions): Policy;
  }
}

/**
 * Adds `withTelemetry()` and `withLogging()` to `Policy` (run once, when this subpath is imported). The
 * core stays free of `@opentelemetry/*`: it only knows the listener chain and the call wrapper.
 * @internal
 */
export function installPolicyMethods(): void {
  if (Object.hasOwn(Policy.prototype, 'withTelemetry')) return;
  Object.defineProperty(Policy.prototype, 'withTelemetry', {
    configurable: true,
    writable: true,
    value: function (this: Policy, options?: TelemetryOptions): Policy {
      return withTelemetry(this, options);
    },
  });
  Object.defineProperty(Policy.prototype, 'withLogging', {
    configurable: true,
    writable: true,
    value: function (this: Policy, logger: ResilienceLogger, options?: LoggingOptions): Policy {
      return withLogging(this, logger, options);
    },
  });
}
