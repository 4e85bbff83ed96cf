import { type DynamicModule, Module } from '@nestjs/common';
import { TerminusModule, type TerminusModuleOptions } from '@nestjs/terminus';
import { ResilienceHealthIndicator } from './resilience-health.indicator.js';

/**
 * Provides {@link ResilienceHealthIndicator} together with terminus (`HealthCheckService`,
 * `HealthIndicatorService`), so a health controller needs only this import:
 *
 * ```ts
 * @Module({
 *   imports: [ResilienceModule.forRoot({ policies: { payments: { preset: 'http' } } }), ResilienceHealthModule],
 *   controllers: [HealthController],
 * })
 * export class AppModule {}
 * ```
 * `ResilienceModule` must be global (its default) so the indicator can inject the `PolicyRegistry`.
 * Use `ResilienceHealthModule.forRoot(terminusOptions)` to pass terminus options (`logger`,
 * `errorLogStyle`, `gracefulShutdownTimeoutMs`). Needs the optional peer `@nestjs/terminus` (12.x).
 */
@Module({
  imports: [TerminusModule],
  providers: [ResilienceHealthIndicator],
  exports: [ResilienceHealthIndicator, TerminusModule],
})
export class ResilienceHealthModule {
  /**
   * The module with terminus configured by `options`.
   * @param options `TerminusModule.forRoot` options; default `{}` (terminus defaults)
   */
  static forRoot(options: TerminusModuleOptions = {}): DynamicModule {
    const terminus = TerminusModule.forRoot(options);
    return {
      // Not ResilienceHealthModule itself: Nest would merge its static imports (the default terminus).
      module: ConfiguredResilienceHealthModule,
      imports: [terminus],
      providers: [ResilienceHealthIndicator],
      exports: [ResilienceHealthIndicator, terminus],
    };
  }
}

/** The class behind `ResilienceHealthModule.forRoot(options)` (no static metadata of its own). */
@Module({})
class ConfiguredResilienceHealthModule {}
