import { Controller, Get, HttpException, Injectable, Module, Param } from '@nestjs/common';
import { AttemptSignal, ResilienceModule, Resilient } from '@nresilience/nestjs';

const PAYMENTS_URL = process.env.PAYMENTS_URL ?? 'http://127.0.0.1:4000';

@Injectable()
export class PaymentsService {
  @Resilient('payments')
  async charge(orderId: string, @AttemptSignal() signal?: AbortSignal): Promise<{ id: string }> {
    const response = await fetch(`${PAYMENTS_URL}/charges/${orderId}`, { method: 'POST', signal });
    if (!response.ok)
      throw new HttpException(`payments answered ${response.status}`, response.status);
    return (await response.json()) as { id: string };
  }
}

@Controller('checkout')
export class CheckoutController {
  constructor(private readonly payments: PaymentsService) {}

  @Get(':orderId')
  checkout(@Param('orderId') orderId: string): Promise<{ id: string }> {
    return this.payments.charge(orderId);
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: {
        // A fixed run of 3 failures trips it (no rate floor) and an unjittered 10 s break, so the
        // check can expect `Retry-After: 10`.
        payments: {
          attempts: 2,
          breaker: {
            consecutiveFailures: 3,
            failureRateFloor: 0,
            breakDuration: '10s',
            jitter: 'none',
          },
        },
      },
      exceptionFilter: true,
    }),
  ],
  controllers: [CheckoutController],
  providers: [PaymentsService],
})
export class AppModule {}
