import { Controller, GatewayTimeoutException, HttpCode, Post } from '@nestjs/common';
import { AttemptTimeoutError } from '@nresilience/nestjs';
import { type Charge, PaymentsService } from './payments.service.js';

/** The checkout a shopper calls; its answer depends on the payments dependency. */
@Controller('checkout')
export class CheckoutController {
  private orders = 0;

  constructor(private readonly payments: PaymentsService) {}

  /**
   * Places an order and captures its payment. 502 when payments kept failing, 503 (from the
   * library's exception filter) when the budget refused a retry, 504 when payments did not answer in time.
   */
  @Post()
  @HttpCode(200)
  async checkout(): Promise<{ orderId: string; charge: Charge }> {
    const orderId = `order-${++this.orders}`;
    try {
      return { orderId, charge: await this.payments.charge(orderId, 4200) };
    } catch (error) {
      // A slow dependency is an expected answer here, not a bug worth a logged stack trace.
      if (error instanceof AttemptTimeoutError) throw new GatewayTimeoutException('payments did not answer in time', { cause: error });
      throw error;
    }
  }
}
