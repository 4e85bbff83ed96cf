import { BadGatewayException, Controller, Get, Param } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { CallRejectedError } from '@nresilience/nestjs';
import { ResilienceHealthIndicator } from '@nresilience/nestjs/health';
import { PaymentsService } from './payments.service.js';

/**
 * Liveness and readiness, the two questions Kubernetes asks:
 * - `/health/live`: is this process working? An open breaker is this process working as designed,
 *   so it never makes liveness fail (a restart would not fix the dependency);
 * - `/health/ready`: should traffic come here now? This app opts `payments` in: while its breaker is
 *   open the pod answers 503 and is taken out of rotation until the break ends.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  /** 200 while the process runs; breaker states appear as details only. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.resilience.isHealthy('resilience')]);
  }

  /** 503 while the `payments` breaker is open or isolated; 200 otherwise. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.resilience.isHealthy('resilience', { downWhenOpen: ['payments'] }),
    ]);
  }
}

/** The business endpoint the sample drives: one charge through the `payments` policy. */
@Controller('checkout')
export class CheckoutController {
  constructor(private readonly payments: PaymentsService) {}

  /** Charges `orderId`: 502 when payments fails, 503 + Retry-After while its breaker is open. */
  @Get(':orderId')
  async checkout(@Param('orderId') orderId: string): Promise<{ id: string }> {
    try {
      return await this.payments.charge(orderId);
    } catch (error) {
      if (error instanceof CallRejectedError) throw error; // the exception filter answers 503 + Retry-After
      throw new BadGatewayException('payments failed');
    }
  }
}
