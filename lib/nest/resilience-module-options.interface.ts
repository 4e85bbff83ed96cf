import type { Clock } from '../core/time/clock.js';
import type { ResilienceConfig } from '../config/policy-config.js';
import type { ModuleLoggingOption, ModuleTelemetryOption } from './resilience-instrumentation.js';

/**
 * What `ResilienceModule.forRoot(...)` takes (and `forRootAsync`'s `useFactory` returns): the policy
 * config plus process-level settings that a reload cannot change.
 *
 * ```ts
 * ResilienceModule.forRoot({
 *   policies: { payments: { attempts: 3, deadline: '10s', budget: { fraction: 0.1 } } },
 *   defaults: { backoff: { transientBase: '100ms', jitter: 'full' } },
 *   exceptionFilter: true,
 * })
 * ```
 */
export interface ResilienceModuleOptions extends ResilienceConfig {
  /**
   * Time source for every registered policy and retry-budget bucket. Default: the system clock.
   * Pass a `FakeClock` in tests so nothing waits on real time.
   */
  clock?: Clock;
  /** Uniform [0, 1) source for every policy's jitter. Default `Math.random`; fix it in tests. */
  random?: () => number;
  /**
   * OpenTelemetry metrics and spans on every registered policy (meter and tracer `nresilience`).
   * Default: on when `@opentelemetry/api` is installed; `false` turns it off. See {@link ModuleTelemetryOption}.
   */
  telemetry?: ModuleTelemetryOption;
  /**
   * Logging of every registered policy through Nest's `Logger`, context `NResilience.<name>`:
   * `'off'`, `'default'` (the default), `'verbose'`, or `{ profile, sampling: LogSampling.oneIn(n) }`.
   */
  logging?: ModuleLoggingOption;
}

/**
 * Options that shape the module definition itself, given beside the options of `forRoot(...)` or
 * beside `useFactory` in `forRootAsync({ ... })` (they cannot come from the async factory, because
 * they decide which providers exist).
 */
export interface ResilienceModuleExtras {
  /**
   * Register the module globally, so every module can inject `PolicyRegistry` and `@InjectPolicy`
   * handles without importing it. Default `true` (like a root-level infrastructure module; set
   * `false` to import it explicitly where needed).
   */
  isGlobal?: boolean;
  /** Register `ResilienceExceptionFilter` as a global filter (`APP_FILTER`). Default `false`. */
  exceptionFilter?: boolean;
}
