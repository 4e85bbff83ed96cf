import { Controller, Get, HttpException, Inject, Injectable, Module, Param } from '@nestjs/common';
import { AttemptSignal, ResilienceModule, Resilient } from '@nresilience/nestjs';
import { defer, type Observable } from 'rxjs';

const PAYMENTS_URL = process.env.PAYMENTS_URL ?? 'http://127.0.0.1:4000';

@Injectable()
export class PaymentsService {
  // Without decorator metadata @Resilient cannot see the return type: it is declared. Each attempt
  // subscribes afresh, so each attempt is a new request.
  @Resilient('payments', { returns: 'observable' })
  charge(orderId: string, @AttemptSignal() signal?: AbortSignal): Observable<{ id: string }> {
    return defer(async () => {
      const response = await fetch(`${PAYMENTS_URL}/charges/${orderId}`, {
        method: 'POST',
        signal,
      });
      if (!response.ok)
        throw new HttpException(`payments answered ${response.status}`, response.status);
      return (await response.json()) as { id: string };
    });
  }
}

@Controller('checkout')
export class CheckoutController {
  // Nest needs the token spelled out when no `design:paramtypes` metadata is emitted.
  constructor(@Inject(PaymentsService) private readonly payments: PaymentsService) {}

  @Get(':orderId')
  checkout(@Param('orderId') orderId: string): Observable<{ id: string }> {
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
