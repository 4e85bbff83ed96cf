import { Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { attemptSignalIndex } from './attempt-signal.decorator.js';
import { PolicyRegistry } from './policy-registry.js';
import { bindClass, unbindRegistry } from './registry-hook.js';
import { INJECT_POLICY_METADATA, RESILIENCE_MODULE_OPTIONS, RESILIENT_POLICY_METADATA } from './resilience.constants.js';
import { RESILIENCE_INSTRUMENTATION, createInstrumentation } from './resilience-instrumentation.js';
import { ConfigurableResilienceModule } from './resilience-module-definition.js';
import { routeWarningsToNest } from './nest-warnings.js';

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
 *   `telemetry`, `logging`) plus `isGlobal` (default `true`) and `exceptionFilter` (default `false`).
 * - Every registered policy gets OpenTelemetry metrics and spans (when `@opentelemetry/api` is
 *   installed; `telemetry: false` turns them off) and logging through Nest's `Logger` under
 *   `NResilience.<name>` (`logging: 'off' | 'default' | 'verbose' | { profile, sampling }`).
 *   `policy.withListener(fn)` keeps both; `policy.with({ onEvent })` replaces the listener and turns
 *   both off for the derived policy.
 * - `forRootAsync({ imports, inject, useFactory, isGlobal?, exceptionFilter? })`: the factory returns
 *   `ResilienceModuleOptions` (`isGlobal`/`exceptionFilter` go beside it, not in its result).
 *
 * On `app.init()` it validates the config (every problem reported with its full path; the app does
 * not start on invalid config), builds the policies, makes the registry reachable by `@Resilient`
 * methods, and checks that every policy name used by `@Resilient` and `@InjectPolicy` in the
 * application's providers and controllers is registered (and that `@AttemptSignal()` sits on
 * `@Resilient` methods only). Import it once, in the root module.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    PolicyRegistry,
    { provide: RESILIENCE_INSTRUMENTATION, useFactory: createInstrumentation, inject: [RESILIENCE_MODULE_OPTIONS] },
  ],
  exports: [PolicyRegistry],
})
export class ResilienceModule extends ConfigurableResilienceModule implements OnModuleInit {
  constructor(
    private readonly registry: PolicyRegistry,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {
    super();
    routeWarningsToNest();
  }

  /**
   * Checks the policy names the application uses (the registry itself was loaded just before, by its
   * own hook). Called by Nest.
   * @throws UnknownPolicyError naming each unknown name and where it is used;
   *   TypeError for `@AttemptSignal()` on a method without `@Resilient`.
   */
  onModuleInit(): void {
    try {
      this.checkNames();
    } catch (error) {
      // Start-up failed: a half-started application must not serve @Resilient calls elsewhere.
      unbindRegistry(this.registry);
      throw error;
    }
  }

  private checkNames(): void {
    const usages = new Map<string, string[]>();
    const use = (name: string, where: string): void => {
      const list = usages.get(name) ?? [];
      if (!list.includes(where)) list.push(where);
      usages.set(name, list);
    };
    const orphanSignals: string[] = [];
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const type: unknown = wrapper.metatype;
      if (typeof type !== 'function' || wrapper.inject) continue; // factory providers: nothing decorated
      const injected: unknown = Reflect.getMetadata(INJECT_POLICY_METADATA, type);
      if (Array.isArray(injected)) for (const name of injected) use(name, `@InjectPolicy in ${type.name}`);
      const prototype: unknown = type.prototype;
      if (prototype === null || typeof prototype !== 'object') continue;
      let resilient = false;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[method];
        const name: unknown = typeof fn === 'function' ? Reflect.getMetadata(RESILIENT_POLICY_METADATA, fn) : undefined;
        if (typeof name === 'string') {
          resilient = true;
          use(name, `@Resilient on ${type.name}.${method}`);
        } else if (attemptSignalIndex(prototype, method) >= 0) {
          orphanSignals.push(`${type.name}.${method}`);
        }
      }
      if (resilient) bindClass(type, this.registry);
    }
    if (orphanSignals.length > 0) {
      throw new TypeError(`@AttemptSignal() needs @Resilient(name) on the same method: ${orphanSignals.join(', ')}`);
    }
    this.registry.require(usages);
  }
}
