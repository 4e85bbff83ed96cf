import { BadGatewayException, Inject, Injectable } from '@nestjs/common';
import { AttemptSignal, Resilient } from '@nresilience/nestjs';

/** Injection token for the payments dependency's base URL. */
export const PAYMENTS_URL = Symbol('PAYMENTS_URL');

/** What the payments dependency returns for a captured charge. */
export interface Charge {
  readonly id: string;
  readonly status: string;
}

/**
 * The dependency answered with a server error or could not be reached. An `HttpException`, so when
 * the last attempt fails Nest answers 502 without logging a stack trace per failed checkout; to the
 * default classifier it is an ordinary error, hence Transient and worth a retry.
 */
export class PaymentsUnavailableError extends BadGatewayException {
  constructor(detail: string, cause?: unknown) {
    super(`payments dependency: ${detail}`, { cause });
  }
}

/** Talks to the payments dependency; every call runs under the `payments` policy. */
@Injectable()
export class PaymentsService {
  constructor(@Inject(PAYMENTS_URL) private readonly baseUrl: string) {}

  /**
   * Captures a charge. Each attempt gets its own signal, so an attempt timeout or the call's deadline
   * cancels the request on the wire instead of leaving it running behind the retry.
   * @param orderId also the idempotency key: retrying a POST is only safe because the dependency can
   *   recognise a repeat
   */
  @Resilient('payments')
  async charge(orderId: string, amount: number, @AttemptSignal() signal?: AbortSignal): Promise<Charge> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': orderId },
        body: JSON.stringify({ orderId, amount }),
        signal,
      });
    } catch (error) {
      // Our own cancellation (attempt timeout, deadline) must reach the executor as is; a refused or
      // reset connection becomes the same 502-shaped error as a 5xx answer.
      if (signal?.aborted) throw signal.reason;
      throw new PaymentsUnavailableError('unreachable', error);
    }
    if (response.status >= 500) {
      // Release the connection for reuse; the error body carries nothing we act on.
      await response.body?.cancel();
      throw new PaymentsUnavailableError(`answered ${response.status}`);
    }
    return (await response.json()) as Charge;
  }
}
