import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Controller,
  GatewayTimeoutException,
  HttpCode,
  HttpException,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { AttemptTimeoutError } from '@nresilience/nestjs';
import { callerSignal } from './caller-signal.js';
import { type Charge, PaymentsService } from './payments.service.js';

// nginx's "client closed request": nobody reads it, but it keeps the cancellation out of the error log.
const CLIENT_CLOSED_REQUEST = 499;

/** The checkout a shopper calls; its answer depends on the payments dependency. */
@Controller('checkout')
export class CheckoutController {
  private orders = 0;

  constructor(private readonly payments: PaymentsService) {}

  /**
   * Places an order and captures its payment. 502 when payments kept failing, 503 (from the
   * library's exception filter) when the budget refused a retry, 504 when payments did not answer in time.
   * When the shopper's connection closes first, the payments call is cancelled (no further attempt or
   * backoff), so a load driver that gave up does not leave the app working, or holding sockets, for nobody.
   */
  @Post()
  @HttpCode(200)
  async checkout(
    @Req() request: IncomingMessage,
    @Res({ passthrough: true }) response: ServerResponse,
  ): Promise<{ orderId: string; charge: Charge }> {
    const orderId = `order-${++this.orders}`;
    const signal = callerSignal(request, response);
    try {
      return { orderId, charge: await this.payments.charge(orderId, 4200, signal) };
    } catch (error) {
      if (signal.aborted)
        throw new HttpException('the caller went away', CLIENT_CLOSED_REQUEST, { cause: error });
      // A slow dependency is an expected answer here, not a bug worth a logged stack trace.
      if (error instanceof AttemptTimeoutError)
        throw new GatewayTimeoutException('payments did not answer in time', { cause: error });
      throw error;
    }
  }
}
