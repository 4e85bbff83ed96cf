import { BadGatewayException, Inject, Injectable } from '@nestjs/common';
import {
  InjectResilientFetch,
  type ResilientFetch,
  markRepeatable,
} from '@nresilience/nestjs/http';

/** Injection token for the payments dependency's base URL. */
export const PAYMENTS_URL = Symbol('PAYMENTS_URL');

/** What the payments dependency returns for a captured charge. */
export interface Charge {
  readonly id: string;
  readonly status: string;
}

/**
 * The dependency answered with a server error or could not be reached, once the policy's attempts
 * were spent. An `HttpException`, so Nest answers 502 without logging a stack trace per failed checkout.
 */
export class PaymentsUnavailableError extends BadGatewayException {
  constructor(detail: string, cause?: unknown) {
    super(`payments dependency: ${detail}`, { cause });
  }
}

/**
 * Talks to the payments dependency through the resilient fetch of the `payments` policy: retries,
 * the retry budget, the attempt timeout and the deadline are applied per host, with each attempt's
 * signal on the wire; a 5xx is retried and, when the attempts run out, returned as the last response.
 */
@Injectable()
export class PaymentsService {
  constructor(
    @InjectResilientFetch('payments') private readonly http: ResilientFetch,
    @Inject(PAYMENTS_URL) private readonly baseUrl: string,
  ) {}

  /**
   * Captures a charge.
   * @param orderId also the idempotency key: retrying a POST is only safe because the dependency can
   *   recognise a repeat, and `markRepeatable` is what lets the client retry it
   * @param signal the caller's: aborting it cancels the call (the attempt in flight and any retry)
   */
  async charge(orderId: string, amount: number, signal?: AbortSignal): Promise<Charge> {
    let response: Response;
    try {
      response = await this.http(
        `${this.baseUrl}/charges`,
        markRepeatable(
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ orderId, amount }),
            signal,
          },
          orderId,
        ),
      );
    } catch (error) {
      // A refused or reset connection after the last attempt; the library's own errors (budget,
      // deadline, attempt timeout) reach the controller and the exception filter as they are.
      if (error instanceof Error && error.name === 'TypeError')
        throw new PaymentsUnavailableError('unreachable', error);
      throw error;
    }
    if (response.status >= 500) {
      // Release the connection for reuse; the error body carries nothing we act on.
      await response.body?.cancel();
      throw new PaymentsUnavailableError(`answered ${response.status}`);
    }
    return (await response.json()) as Charge;
  }
}
