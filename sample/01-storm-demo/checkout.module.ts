import { type DynamicModule, Module } from '@nestjs/common';
import { ResilienceModule } from '@nresilience/nestjs';
import { ResilientHttpModule } from '@nresilience/nestjs/http';
import { CheckoutController } from './checkout.controller.js';
import { PAYMENTS_URL, PaymentsService } from './payments.service.js';

/** How one demo run configures the app. */
export interface CheckoutOptions {
  /** Base URL of the payments dependency. */
  readonly paymentsUrl: string;
  /** True for the default automatic retry budget, false for `budget: 'none'`. */
  readonly budget: boolean;
}

/**
 * The demo's Nest app: `/checkout` calling the payments dependency through the resilient fetch of
 * the `payments` policy.
 * The two runs differ in one line, the budget, so any difference in the numbers is the budget's.
 */
@Module({})
export class CheckoutModule {
  /** The module for one run. */
  static forRun(options: CheckoutOptions): DynamicModule {
    return {
      module: CheckoutModule,
      imports: [
        ResilienceModule.forRoot({
          policies: {
            payments: {
              // A common production setting: two retries, short backoff so they land in the same second.
              attempts: 3,
              backoff: { type: 'exponential', transientBase: 25, maximumDelay: 250 },
              budget: options.budget ? true : 'none',
              deadline: '3s',
              attemptTimeout: '1s',
            },
          },
          exceptionFilter: true,
        }),
        // The outbound calls: a resilient fetch running the `payments` policy with its state per host.
        ResilientHttpModule.register({ policy: 'payments' }),
      ],
      controllers: [CheckoutController],
      providers: [PaymentsService, { provide: PAYMENTS_URL, useValue: options.paymentsUrl }],
    };
  }
}
