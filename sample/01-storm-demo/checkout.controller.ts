import { Controller, HttpCode, Post } from '@nestjs/common';
import { type Charge, PaymentsService } from './payments.service.js';

/** The checkout a shopper calls; its answer depends on the payments dependency. */
@Controller('checkout')
export class CheckoutController {
  private orders = 0;

  constructor(private readonly payments: PaymentsService) {}

  /** Places an order and captures its payment; 502 when payments failed, 503 when the budget refused a retry. */
  @Post()
  @HttpCode(200)
  async checkout(): Promise<{ orderId: string; charge: Charge }> {
    const orderId = `order-${++this.orders}`;
    const charge = await this.payments.charge(orderId, 4200);
    return { orderId, charge };
  }
}
