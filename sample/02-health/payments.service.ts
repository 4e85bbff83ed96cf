import { Inject, Injectable } from '@nestjs/common';
import { AttemptSignal, Resilient } from '@nresilience/nestjs';

/** Injection token of the payments dependency's base URL. */
export const PAYMENTS_URL = Symbol('PAYMENTS_URL');

/** Calls the payments dependency under the `payments` policy (breaker included). */
@Injectable()
export class PaymentsService {
  /** @param baseUrl the dependency's base URL */
  constructor(@Inject(PAYMENTS_URL) private readonly baseUrl: string) {}

  /**
   * Charges an order. Each attempt gets its own signal; a 5xx answer is thrown, so it counts as a
   * Transient failure for the breaker.
   * @throws Error when the dependency answers non-2xx; CallRejectedError while the breaker is open.
   */
  @Resilient('payments')
  async charge(orderId: string, @AttemptSignal() signal?: AbortSignal): Promise<{ id: string }> {
    const response = await fetch(`${this.baseUrl}/charges/${encodeURIComponent(orderId)}`, { method: 'POST', signal });
    if (!response.ok) throw new Error(`payments answered ${response.status}`);
    return (await response.json()) as { id: string };
  }
}
