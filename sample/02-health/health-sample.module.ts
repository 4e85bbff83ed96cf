import { type DynamicModule, Module } from '@nestjs/common';
import { type Clock, ResilienceModule } from '@nresilience/nestjs';
import { ResilienceHealthModule } from '@nresilience/nestjs/health';
import { CheckoutController, HealthController } from './health.controller.js';
import { PAYMENTS_URL, PaymentsService } from './payments.service.js';

/** How the sample app is configured. */
export interface HealthSampleOptions {
  /** Base URL of the payments dependency. */
  readonly paymentsUrl: string;
  /** Time source for the policies (tests pass a FakeClock); default the system clock. */
  readonly clock?: Clock;
}

/**
 * The sample app: a `payments` policy with a breaker (15 s break, no jitter, so the numbers printed
 * are exact), a healthy `inventory` policy, the liveness and readiness endpoints and the exception
 * filter (refusals → 503 + Retry-After).
 */
@Module({})
export class HealthSampleModule {
  /** The module for `options`. */
  static forRoot(options: HealthSampleOptions): DynamicModule {
    return {
      module: HealthSampleModule,
      imports: [
        ResilienceModule.forRoot({
          policies: {
            payments: {
              preset: 'http',
              attempts: 1,
              breaker: { breakDuration: '15s', jitter: 'none' },
            },
            inventory: { preset: 'http' },
          },
          clock: options.clock,
          exceptionFilter: true,
        }),
        ResilienceHealthModule.forRoot({ logger: false }),
      ],
      controllers: [HealthController, CheckoutController],
      providers: [PaymentsService, { provide: PAYMENTS_URL, useValue: options.paymentsUrl }],
    };
  }
}
