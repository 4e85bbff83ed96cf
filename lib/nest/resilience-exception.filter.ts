import { type ArgumentsHost, Catch, type ExceptionFilter, HttpStatus, Injectable, Optional } from '@nestjs/common';
import { BaseExceptionFilter, HttpAdapterHost } from '@nestjs/core';
import { type Observable, defer, mergeMap } from 'rxjs';
import { AttemptTimeoutError, CallRejectedError, DeadlineExceededError, type RejectionReason } from '../core/errors.js';
import { formatRetryAfter } from '../core/backoff/retry-after.js';
import { stopReasonOf } from '../core/execution/stop-reasons.js';
import { grpcRefusalAnswer } from './grpc-refusal-answer.js';

/**
 * What each refusal means for the client, true to when it happens: the retry budget is checked only
 * before a retry, so a budget refusal follows an attempt that failed; a breaker refusal can come
 * before any attempt (DESIGN §3.7).
 */
const REFUSAL_DETAILS: Record<RejectionReason, string> = {
  BudgetExhausted: 'A call to a dependency of this service failed and was not retried: retries to that dependency are paused while its retry budget is spent',
  DependencyUnavailable: 'A dependency of this service is not being called right now: its circuit breaker is open',
  RateLimited: 'A dependency of this service is not being called right now: its rate limit is reached',
  QuotaExhausted: 'A dependency of this service is not being called right now: its quota is spent',
};

/** Media type of the bodies {@link ResilienceExceptionFilter} writes (RFC 9457). */
export const PROBLEM_JSON = 'application/problem+json';

/** Problem type URIs used by {@link ResilienceExceptionFilter} (URNs: stable identifiers, not links). */
export const ProblemTypes = {
  /** A guard of this service refused the call (retry budget exhausted, breaker open, limiter); status 503. */
  callRejected: 'urn:nresilience:problem:call-rejected',
  /** The call's deadline passed; status 504. */
  deadlineExceeded: 'urn:nresilience:problem:deadline-exceeded',
  /** The call's attempts ran out on the work's own error (opt-in, {@link ResilienceBadGatewayFilter}); status 502. */
  attemptsExhausted: 'urn:nresilience:problem:attempts-exhausted',
} as const;

/** Options of {@link ResilienceExceptionFilter.problemFor}. */
export interface ResilienceProblemOptions {
  /**
   * Answer 502 Bad Gateway (body type `urn:nresilience:problem:attempts-exhausted`, reason
   * `AttemptsExhausted`, no `Retry-After`) for an error a policy call rejected with because its
   * attempts ran out on the work's own error (stop reason `attemptsExhausted`, see `stopReasonOf`).
   * Default `false`: that error is not the library's, and goes to the application's handling.
   */
  badGateway?: boolean;
}

/**
 * An RFC 9457 problem document as written by {@link ResilienceExceptionFilter}. `reason` is an
 * extension member: the `CallRejectedError.reason` (`BudgetExhausted`, `DependencyUnavailable`, …),
 * `DeadlineExceeded`, `AttemptTimeout` or (opt-in 502) `AttemptsExhausted`. Never carries a stack trace, a policy name or the underlying error's message.
 */
export interface ResilienceProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
  reason: string;
}

/**
 * Turns the library's refusals into HTTP answers a caller can act on:
 * - `CallRejectedError` → 503 Service Unavailable, `Retry-After` = `retryAfter` in whole seconds
 *   rounded up, at least 1 and at most a day, digits only (1200 ms → `2`, 0 ms → `1`; no header when
 *   `retryAfter` is undefined; the body's detail gives the same number), body type
 *   `urn:nresilience:problem:call-rejected`;
 * - `DeadlineExceededError`, and an `AttemptTimeoutError` that ended the call → 504 Gateway Timeout,
 *   body type `urn:nresilience:problem:deadline-exceeded`.
 *
 * Bodies are `application/problem+json` `{ type, title, status, detail, reason }`. In non-HTTP
 * contexts: a gRPC microservice handler (Nest's gRPC transport, also in a hybrid app) answers
 * UNAVAILABLE with `grpc-retry-pushback-ms` for a refusal and DEADLINE_EXCEEDED for a deadline (see
 * `grpcRefusalAnswer`), never touching HTTP APIs; other RPC transports (TCP, Redis, NATS, …) get
 * Nest's own RPC answer (`BaseRpcExceptionFilter`: `Internal server error`), since an exception a
 * filter rethrows there is never answered and the caller waits for ever; other contexts (WebSocket,
 * GraphQL) get the exception rethrown untouched for their own handling.
 * Register it globally with `ResilienceModule.forRoot({ exceptionFilter: true })`, or per controller
 * with `@UseFilters(ResilienceExceptionFilter)`. It catches the library's errors only: when the
 * attempts run out on the work's own error, that error gets Nest's usual handling (an
 * `HttpException` its status, anything else 500); {@link ResilienceBadGatewayFilter} answers 502 then. Uses Nest's `HttpAdapterHost` (any platform); without
 * one (constructed by hand) it writes through the Node/Express response API.
 */
@Catch(CallRejectedError, DeadlineExceededError, AttemptTimeoutError)
@Injectable()
export class ResilienceExceptionFilter implements ExceptionFilter<CallRejectedError | DeadlineExceededError | AttemptTimeoutError> {
  // Nest's own RPC answer, loaded at the first RPC exception this filter has no answer for.
  private rpcFallback: { catch(exception: unknown, host: ArgumentsHost): Observable<never> } | undefined;

  /** @param adapterHost Nest's HTTP adapter host (injected); optional. */
  constructor(
    /** Nest's HTTP adapter host, through which answers are written (the Node response API without it). */
    @Optional() protected readonly adapterHost?: HttpAdapterHost,
  ) {}

  /**
   * Writes the problem response for `exception`.
   * @returns in a gRPC context, the Observable erroring with the gRPC status Nest's server sends
   * @throws the exception itself outside HTTP and gRPC contexts, or when it is neither error type.
   */
  catch(exception: CallRejectedError | DeadlineExceededError | AttemptTimeoutError, host: ArgumentsHost): void | Observable<never> {
    if (host.getType() === 'rpc') {
      const answer = grpcRefusalAnswer(exception, host);
      if (answer !== undefined) return answer;
    }
    if (host.getType() !== 'http') return this.unanswered(exception, host);
    const answer = ResilienceExceptionFilter.problemFor(exception, this.problemOptions);
    if (answer === undefined) return this.unanswered(exception, host);
    const response = host.switchToHttp().getResponse<Record<string, unknown>>();
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter !== undefined) {
      adapter.setHeader(response, 'Content-Type', PROBLEM_JSON);
      if (answer.retryAfter !== undefined) adapter.setHeader(response, 'Retry-After', answer.retryAfter);
      // A string body: Nest 11's Express adapter replaces a non-JSON Content-Type on an object body.
      adapter.reply(response, JSON.stringify(answer.body), answer.body.status);
      return;
    }
    const raw = response as unknown as {
      headersSent?: boolean;
      statusCode: number;
      setHeader(name: string, value: string): void;
      end(body: string): void;
    };
    if (raw.headersSent) return;
    raw.statusCode = answer.body.status;
    raw.setHeader('Content-Type', PROBLEM_JSON);
    if (answer.retryAfter !== undefined) raw.setHeader('Retry-After', answer.retryAfter);
    raw.end(JSON.stringify(answer.body));
  }

  /** What {@link ResilienceExceptionFilter.problemFor} answers in this filter. @internal */
  protected get problemOptions(): ResilienceProblemOptions {
    return NO_OPTIONS;
  }

  /**
   * An exception this filter has no answer for: in an RPC context Nest's own answer
   * (`BaseRpcExceptionFilter`: an `RpcException` keeps its error, anything else is `Internal server
   * error`) — a filter that throws there leaves the call unanswered (a gRPC call until its deadline,
   * a TCP one for ever); rethrown elsewhere (Nest's HTTP handling, GraphQL's own). @internal
   */
  protected unanswered(exception: unknown, host: ArgumentsHost): void | Observable<never> {
    if (host.getType() === 'rpc') return this.rpcAnswer(exception, host);
    throw exception;
  }

  // @nestjs/microservices is loaded when the first RPC error comes (an RPC context means the app has
  // it), so the root entry keeps loading without it.
  private rpcAnswer(exception: unknown, host: ArgumentsHost): Observable<never> {
    if (this.rpcFallback !== undefined) return this.rpcFallback.catch(exception, host);
    return defer(() => import('@nestjs/microservices')).pipe(
      mergeMap(({ BaseRpcExceptionFilter }) => (this.rpcFallback ??= new BaseRpcExceptionFilter<unknown, never>()).catch(exception, host)),
    );
  }

  /**
   * The problem body and `Retry-After` value (whole seconds as a string) for an error, or undefined
   * when it is not one of the library's refusals. Exposed for custom filters (Fastify, RPC bridges).
   * @param exception any thrown value
   * @param options `badGateway: true` also answers 502 for attempts exhausted on the work's own error
   */
  static problemFor(exception: unknown, options: ResilienceProblemOptions = NO_OPTIONS): { body: ResilienceProblem; retryAfter: string | undefined } | undefined {
    if (exception instanceof CallRejectedError) {
      const retryAfter = exception.retryAfter === undefined ? undefined : formatRetryAfter(exception.retryAfter);
      return {
        retryAfter,
        body: {
          type: ProblemTypes.callRejected,
          title: 'Service Unavailable',
          status: HttpStatus.SERVICE_UNAVAILABLE,
          detail:
            `${REFUSAL_DETAILS[exception.reason]} (${exception.reason}).` +
            (retryAfter === undefined ? ' Try again later.' : ` Try again in ${retryAfter} s.`),
          reason: exception.reason,
        },
      };
    }
    if (exception instanceof DeadlineExceededError || exception instanceof AttemptTimeoutError) {
      // A last attempt that timed out is the same answer to the caller: the dependency was too slow.
      return {
        retryAfter: undefined,
        body: {
          type: ProblemTypes.deadlineExceeded,
          title: 'Gateway Timeout',
          status: HttpStatus.GATEWAY_TIMEOUT,
          detail: 'A dependency of this service did not answer within the time allowed for this request.',
          reason: exception instanceof AttemptTimeoutError ? 'AttemptTimeout' : 'DeadlineExceeded',
        },
      };
    }
    if (options.badGateway === true && stopReasonOf(exception) === 'attemptsExhausted') {
      return {
        retryAfter: undefined,
        body: {
          type: ProblemTypes.attemptsExhausted,
          title: 'Bad Gateway',
          status: HttpStatus.BAD_GATEWAY,
          detail: 'A dependency of this service failed on every attempt allowed for this request.',
          reason: 'AttemptsExhausted',
        },
      };
    }
    return undefined;
  }
}

const NO_OPTIONS: ResilienceProblemOptions = Object.freeze({});
const BAD_GATEWAY: ResilienceProblemOptions = Object.freeze({ badGateway: true });

/**
 * {@link ResilienceExceptionFilter} with the opt-in 502 of DESIGN §4: also answers 502 Bad Gateway
 * with the problem body (`urn:nresilience:problem:attempts-exhausted`, reason `AttemptsExhausted`, no
 * `Retry-After`: nothing says when the dependency will be back) when a call's attempts ran out on the
 * work's own error — the dependency failed on every attempt allowed, a gateway's failure rather than
 * this service's. Refusals, deadlines and attempt timeouts get the same answers as in the parent
 * filter; an error that stopped a call for any other reason (an answer such as a 404, a permanent
 * verdict, a caller's abort), or that no call rejected with, gets Nest's own handling
 * (`BaseExceptionFilter`: an `HttpException` its status, anything else 500).
 *
 * It catches every exception (`@Catch()`), so register it where the application has no catch-all of
 * its own: `ResilienceModule.forRoot({ exceptionFilter: { badGateway: true } })`, or
 * `app.useGlobalFilters(new ResilienceBadGatewayFilter(app.get(HttpAdapterHost)))`. A catch-all of
 * your own calls `ResilienceExceptionFilter.problemFor(exception, { badGateway: true })` instead.
 * Errors of calls whose policy adds nothing (one attempt, no budget, breaker, bound or listener) carry
 * no stop reason (see `stopReasonOf`) and get Nest's handling.
 */
@Catch()
@Injectable()
export class ResilienceBadGatewayFilter extends ResilienceExceptionFilter {
  // Made at the first unanswered error: a testing module builds its filters before the HTTP adapter exists.
  private fallback: BaseExceptionFilter | undefined;

  /** @param adapterHost Nest's HTTP adapter host (injected); without an adapter, unanswered errors are rethrown. */
  constructor(@Optional() adapterHost?: HttpAdapterHost) {
    super(adapterHost);
  }

  /** Answers 502 for attempts exhausted too (`badGateway: true`). @internal */
  protected override get problemOptions(): ResilienceProblemOptions {
    return BAD_GATEWAY;
  }

  /**
   * Any other exception gets Nest's own handling: `BaseExceptionFilter` over HTTP (rethrown without an
   * HTTP adapter); outside HTTP as in the parent (`BaseRpcExceptionFilter` in an RPC context). @internal
   */
  protected override unanswered(exception: unknown, host: ArgumentsHost): void | Observable<never> {
    if (host.getType() !== 'http') return super.unanswered(exception, host);
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter === undefined) throw exception;
    (this.fallback ??= new BaseExceptionFilter(adapter)).catch(exception, host);
  }
}
