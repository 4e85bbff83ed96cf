import { HttpException, Inject, Injectable } from '@nestjs/common';
import { AttemptSignal, Resilient } from '@nresilience/nestjs';

/** Injection token of the payments dependency's base URL. */
export const PAYMENTS_URL = Symbol('PAYMENTS_URL');

/** Calls the payments dependency under the `payments` policy (breaker included). */
@Injectable()
export class PaymentsService {
  /** @param baseUrl the dependency's base URL */
  constructor(@Inject(PAYMENTS_URL) private readonly baseUrl: string) {}

  /**
   * Charges an order. Each attempt gets its own signal. A non-2xx answer is thrown as an
   * `HttpException` with its status, so the classifier judges it by that status: a 5xx is a Transient
   * failure for the breaker, a 4xx an answer (never retried, never breaker evidence).
   * @throws HttpException with the dependency's status when it answers non-2xx; CallRejectedError while the breaker is open.
   */
  @Resilient('payments')
  async charge(orderId: string, @AttemptSignal() signal?: AbortSignal): Promise<{ id: string }> {
    const response = await fetch(`${this.baseUrl}/charges/${encodeURIComponent(orderId)}`, {
      method: 'POST',
      signal,
    });
    if (!response.ok)
      throw new HttpException(`payments answered ${response.status}`, response.status);
    return (await response.json()) as { id: string };
  }
}
