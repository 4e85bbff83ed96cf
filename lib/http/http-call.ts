import type { AttemptContext, Policy, RunOptions } from '../core/index.js';
import { OutboundCall } from '../outbound/outbound-call.js';
import { markHttpFailure } from './dependency-failures.js';
import { isHedgeableRequest, isIdempotentMethod } from './idempotency.js';
import { BodyNotReplayableError } from './request-body.js';

/** What the HTTP clients (fetch, axios) know of one request before its first attempt. */
export interface HttpRequestFacts {
  /** The request's origin (`https://host:port`), for the dependency-failure mark. */
  readonly origin: string;
  /** The method, upper-case. */
  readonly method: string;
  /** Whether the request carries an `Idempotency-Key`. */
  readonly keyed: boolean;
  /** Whether its body can be sent again. */
  readonly replayable: boolean;
  /** The replay limit a body over it broke (bytes), for `BodyNotReplayableError`; `undefined` when none applies. */
  readonly maximumReplayBytes?: number;
  /** Send the ambient criticality with every attempt. */
  readonly propagateCriticality: boolean;
}

/**
 * The outbound call of one HTTP request, whichever client sends it: the idempotency decision
 * (repeatable when the method is idempotent or the request is keyed; hedgeable when it is a GET,
 * HEAD, OPTIONS or keyed request whose body can be sent again), a body that cannot be sent again
 * refused at the second send (`BodyNotReplayableError`), and a call that failed on its dependency
 * marked for the exception filter (`markHttpFailure`). The client keeps the wire.
 * @typeParam B what a failed attempt leaves to release (a `Response`, an axios `data` stream)
 */
export class HttpCall<B> extends OutboundCall<B> {
  /**
   * @param policy the host's policy
   * @param request what the request is
   * @param release lets go of a failed attempt's answer (never throws)
   */
  constructor(
    policy: Policy,
    private readonly http: HttpRequestFacts,
    release: (answer: B) => void,
  ) {
    super(
      policy,
      {
        repeatable: isIdempotentMethod(http.method) || http.keyed,
        hedgeable: isHedgeableRequest(http.method, http.keyed) && http.replayable,
        notReplayable: http.replayable
          ? undefined
          : (last) => new BodyNotReplayableError(http.maximumReplayBytes, { cause: last }),
        propagateCriticality: http.propagateCriticality,
      },
      release,
    );
  }

  /**
   * Sends the request: {@link OutboundCall.run} with `attempt`, the caller owning `owned(answer)`;
   * a rejection is marked when it is the dependency's failure, and a POST stopped only because it
   * is not repeatable rejects with `notRepeatable(error)`.
   */
  send<A>(
    attempt: (context: AttemptContext) => Promise<A>,
    options: Omit<RunOptions, 'repeatable' | 'facts'>,
    owned: (answer: A) => unknown,
    notRepeatable: (error: unknown) => unknown,
    carried?: (final: unknown) => unknown,
  ): Promise<A> {
    return this.run(attempt, options, {
      owned,
      notRepeatable,
      carried,
      failed: (final) => markHttpFailure(final, this.last, this.policy, this.http.origin),
    });
  }
}
