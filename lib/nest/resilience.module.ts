import { Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { PolicyRegistry } from './policy-registry.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.constants.js';
import { ModuleOptionsReading, RESILIENCE_SETTINGS } from './module-settings.js';
import { ModuleRateStore, RESILIENCE_RATE_STORE } from './module-rate-store.js';
import { RESILIENCE_INSTRUMENTATION, createInstrumentation } from './resilience-instrumentation.js';
import { ConfigurableResilienceModule } from './resilience-module-definition.js';
import { routeWarningsToNest } from './nest-warnings.js';
import { ResilientExplorer } from './resilient.explorer.js';
import { ShutdownGrace } from './shutdown-grace.js';

/**
 * Named resilience policies for a Nest application.
 *
 * ```ts
 * @Module({
 *   imports: [
 *     ResilienceModule.forRoot({
 *       policies: { payments: { attempts: 3, deadline: '10s' } },
 *       defaults: { backoff: { transientBase: '100ms' } },
 *       exceptionFilter: true,
 *     }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 * - `forRoot(options)` takes `ResilienceModuleOptions` (`policies`, `defaults`, `clock`, `random`,
 *   `telemetry`, `logging`, `shutdown: { grace }`) plus `isGlobal` (default `true`) and
 *   `exceptionFilter` (default `false`).
 * - Every registered policy gets OpenTelemetry metrics and spans (when `@opentelemetry/api` is
 *   installed; `telemetry: false` turns them off) and logging through Nest's `Logger` under
 *   `NResilience.<name>` (`logging: 'off' | 'default' | 'verbose' | { profile, sampling }`).
 *   `policy.withListener(fn)` keeps both; `policy.with({ onEvent })` replaces the listener and turns
 *   both off for the derived policy.
 * - `forRootAsync({ imports, inject, useFactory, isGlobal?, exceptionFilter? })`: the factory returns
 *   `ResilienceModuleOptions` (`isGlobal`/`exceptionFilter` go beside it, not in its result).
 *
 * On `app.init()` it validates the config (every problem reported with its full path; the app does
 * not start on invalid config), builds the policies, binds the application's `@Resilient` instances
 * to its own registry (two applications in one process each run their own policies), and checks that
 * every policy name used by `@Resilient` and `@InjectPolicy` in the application's providers and
 * controllers is registered (and that `@AttemptSignal()` sits on `@Resilient` methods only). Import
 * it once, in the root module.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    PolicyRegistry,
    ResilientExplorer,
    ShutdownGrace,
    // The options are read here, once; everything below consumes the reading.
    {
      provide: RESILIENCE_SETTINGS,
      useFactory: (options: unknown) => ModuleOptionsReading.of(options),
      inject: [RESILIENCE_MODULE_OPTIONS],
    },
    {
      // Async: the registry builds its policies with the store, so it waits for the connection.
      provide: RESILIENCE_RATE_STORE,
      useFactory: (reading: ModuleOptionsReading) => ModuleRateStore.open(reading.valid?.redis),
      inject: [RESILIENCE_SETTINGS],
    },
    {
      provide: RESILIENCE_INSTRUMENTATION,
      useFactory: createInstrumentation,
      inject: [RESILIENCE_SETTINGS],
    },
  ],
  exports: [PolicyRegistry],
})
export class ResilienceModule extends ConfigurableResilienceModule implements OnModuleInit {
  /** Created by Nest (import the module with `forRoot`/`forRootAsync`). @internal */
  constructor(private readonly explorer: ResilientExplorer) {
    super();
    routeWarningsToNest();
  }

  /**
   * Binds and checks what the application uses (the registry loaded its config just before, in its
   * own hook: a module's own hook runs after its providers'). Called by Nest.
   * @throws UnknownPolicyError naming each unknown name and where it is used;
   *   TypeError for `@AttemptSignal()` on a method without `@Resilient`;
   *   ResilienceConfigError for a bad `@Resilient(name, { classifier })` (naming class and method).
   */
  onModuleInit(): void {
    this.explorer.explore();
  }
}
