// docs/shutdown.md "A grace after SIGTERM"; test/shutdown-grace.e2e-spec.ts runs its health controller.
// #region shutdown-grace
import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { ResilienceHealthIndicator, ResilienceHealthModule } from '../../lib/health/index.js';
import { ResilienceModule } from '../../lib/nest/index.js';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  // Readiness: down from the first shutdown hook, so the pod leaves rotation while it still serves.
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.resilience.isHealthy('resilience', { downWhenShuttingDown: true }),
    ]);
  }

  // Liveness stays up while the application shuts down.
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.resilience.isHealthy('resilience')]);
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { payments: { preset: 'http' } },
      shutdown: { grace: '5s' },
    }),
    ResilienceHealthModule,
  ],
  controllers: [HealthController],
})
export class AppModule {}
// In main.ts, app.enableShutdownHooks() makes SIGTERM run the shutdown hooks with its signal.
// #endregion shutdown-grace
