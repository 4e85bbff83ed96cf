import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  type HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Optional,
} from '@nestjs/common';
import { BaseExceptionFilter, HttpAdapterHost } from '@nestjs/core';
import { type Observable, defer, mergeMap } from 'rxjs';
import {
  AttemptStalledError,
  AttemptTimeoutError,
  CallRejectedError,
  DeadlineExceededError,
  formatRetryAfter,
  RateLimitedError,
  type RejectionReason,
  stopReasonOf,
  SystemClock,
  type Clock,
} from '../core/index.js';
import type { DependencyFailure } from '../core/internal.js';
import { DependencyFailureLog } from './dependency-failure-log.js';
import { grpcAnswer } from './grpc-refusal-answer.js';
import { passedOnRetryAfter } from './http-exception-from.js';
import { findLibraryError } from './library-error.js';
import { methodFailureOf } from './method-failures.js';
import { RESILIENCE_SETTINGS } from './module-settings.js';

/**
 * What each refusal means for the client, true to when it happens: the retry budget is checked only
 * before a retry, so a budget refusal follows an attempt that failed; a breaker refusal can come
 * before any attempt (DESIGN §3.7).
 */
const REFUSAL_DETAILS: Record<RejectionReason, string> = {
  BudgetExhausted:
    'A call to a dependency of this service failed and was not retried: retries to that dependency are paused while its retry budget is spent',
  DependencyUnavailable:
    'A dependency of this service is not being called right now: its circuit breaker is open',
  Limited:
    'A dependency of this service is not being called right now: as many calls to it as this service allows are already in flight',
  RateLimited:
    'A dependency of this service is not being called right now: its rate limit is reached',
  QuotaExhausted: 'A dependency of this service is not being called right now: its quota is spent',
};
/** The detail of a refusal whose reason is none of the four above (a hand-made `CallRejectedError`). */
const GENERIC_REFUSAL = 'A dependency of this service is not being called right now';

/** What a 502 says, by how the dependency's call ended. */
const DEPENDENCY_FAILURES: Record<DependencyFailure['ending'], { reason: string; detail: string }> =
  {
    attemptsExhausted: {
      reason: 'AttemptsExhausted',
      detail: 'A dependency of this service failed on every attempt allowed for this request.',
    },
    notRepeatable: {
      reason: 'NotRepeatable',
      detail:
        'A dependency of this service failed on a request that is not safe to send twice, so it was not sent again.',
    },
    bodyNotReplayable: {
      reason: 'BodyNotReplayable',
      detail: 'A dependency of this service failed, and the request could not be sent again.',
    },
    resumeRefused: {
      reason: 'ResumeRefused',
      detail:
        'A dependency of this service broke off its answer part-way, and it could not be resumed.',
    },
    bodyBroken: {
      reason: 'BodyBroken',
      detail: 'A dependency of this service broke off its answer part-way.',
    },
  };
// The HTTP client's errors known by name (see findLibraryError), as endings.
const ENDINGS_BY_NAME: Record<string, DependencyFailure['ending']> = {
  NotRepeatableError: 'notRepeatable',
  BodyNotReplayableError: 'bodyNotReplayable',
  ResumeRefusedError: 'resumeRefused',
};

/** Media type of the bodies {@link ResilienceExceptionFilter} writes (RFC 9457). */
export const PROBLEM_JSON = 'application/problem+json';

/** Problem type URIs used by {@link ResilienceExceptionFilter} (URNs: stable identifiers, not links). */
export const ProblemTypes = {
  /** A guard of this service refused the call (retry budget exhausted, breaker open, limiter); status 503. */
  callRejected: 'urn:nresilience:problem:call-rejected',
  /** The call's deadline passed, an attempt timed out, or an answer stalled; status 504. */
  deadlineExceeded: 'urn:nresilience:problem:deadline-exceeded',
  /** The call's attempts ran out on the dependency's failure; status 502. */
  attemptsExhausted: 'urn:nresilience:problem:attempts-exhausted',
  /**
   * A dependency failed in a way that ended the call before its attempts ran out: a request not safe
   * to repeat failed once, its body could not be sent again, or the answer broke off part-way; status 502.
   */
  dependencyFailed: 'urn:nresilience:problem:dependency-failed',
} as const;

/** Options of {@link ResilienceExceptionFilter.problemFor}. */
export interface ResilienceProblemOptions {
  /**
   * Also answer 502 Bad Gateway (body type `urn:nresilience:problem:attempts-exhausted`, reason
   * `AttemptsExhausted`, no `Retry-After`) for any error a policy call rejected with because its
   * attempts ran out on the work's own error (stop reason `attemptsExhausted`, see `stopReasonOf`) —
   * a `@Resilient` method's own error included. Default `false`: only the failures of the library's
   * own clients (resilient fetch, axios seam, gRPC interceptor) are answered 502; the application's own
   * errors go to the application's handling.
   */
  badGateway?: boolean;
}

/**
 * An RFC 9457 problem document as written by {@link ResilienceExceptionFilter}. `reason` is an
 * extension member: the `CallRejectedError.reason` (`BudgetExhausted`, `DependencyUnavailable`, …),
 * `DeadlineExceeded`, `AttemptTimeout`, `AttemptStalled`, or for a 502 `AttemptsExhausted`,
 * `NotRepeatable`, `BodyNotReplayable`, `ResumeRefused`, `BodyBroken`. Never carries a stack trace, a
 * policy name, a host or the underlying error's message.
 */
export interface ResilienceProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
  reason: string;
}

/** What {@link ResilienceExceptionFilter.problemFor} returns: the body, and `Retry-After` in whole seconds as a string. */
export interface ResilienceAnswer {
  body: ResilienceProblem;
  retryAfter: string | undefined;
}

/** An answer and, for a 502 of one of the library's clients, the failure to log. */
interface FilterAnswer extends ResilienceAnswer {
  readonly failure?: DependencyFailure;
}

const NO_OPTIONS: ResilienceProblemOptions = Object.freeze({});
const BAD_GATEWAY: ResilienceProblemOptions = Object.freeze({ badGateway: true });

/**
 * Matches, for `@Catch`, exactly the exceptions {@link ResilienceExceptionFilter} answers (Nest picks a
 * filter with `exception instanceof`), so every other exception reaches the application's own filters
 * or Nest's handling as if this filter were not there.
 */
abstract class AnsweredByResilience {
  static [Symbol.hasInstance](value: unknown): boolean {
    return answerOf(value, NO_OPTIONS) !== undefined || passedOnRetryAfter(value) !== undefined;
  }
}

/**
 * Turns the library's refusals, deadlines and its clients' dependency failures into HTTP answers a
 * caller can act on, wherever the library's error is wrapped (the thrown value or its `cause` chain:
 * a grpc-js `ServiceError` from the gRPC interceptor, an axios seam error, an application's wrapper;
 * never through an `HttpException`, which is the application's answer):
 * - `CallRejectedError` (and a local `RateLimitedError`) → 503 Service Unavailable, `Retry-After` =
 *   `retryAfter` in whole seconds rounded up, at least 1 and at most a day, digits only (1200 ms → `2`,
 *   0 ms → `1`; no header when `retryAfter` is undefined; the body's detail gives the same number),
 *   body type `urn:nresilience:problem:call-rejected`;
 * - `DeadlineExceededError`, an `AttemptTimeoutError` that ended the call, and an
 *   `AttemptStalledError` (an answer that stopped arriving) → 504 Gateway Timeout, body type
 *   `urn:nresilience:problem:deadline-exceeded`;
 * - a call of the library's own clients (the resilient fetch, the axios seam, the gRPC interceptor)
 *   whose dependency failed — attempts exhausted (`ECONNREFUSED`, a 5xx axios error, an UNAVAILABLE
 *   status), a request not safe to repeat that failed once, a body that could not be sent again, or an
 *   answer body that broke off while the handler read it → 502 Bad Gateway, body type
 *   `urn:nresilience:problem:attempts-exhausted` (or `…:dependency-failed`). The log gets one warning
 *   per (policy, dependency, cause) and 30 s window naming the dependency and the cause
 *   (`[orders] dependency 127.0.0.1:8080 failed on every attempt allowed: ECONNREFUSED; answered 502`)
 *   with the count of such answers since the previous warning — never a stack.
 *
 * Bodies are `application/problem+json` `{ type, title, status, detail, reason }`. A dependency's 429 or
 * 503 passed on with `httpExceptionFrom` is answered as Nest answers it (its status, `{ statusCode,
 * message }` as JSON) plus the `Retry-After` the dependency asked for, in whole seconds (1 s to a day;
 * a malformed one is dropped). Every other exception (the application's own errors, any other
 * `HttpException`) is not caught: it gets the application's filters or Nest's handling. In non-HTTP contexts: a gRPC microservice handler (Nest's gRPC transport,
 * also in a hybrid app) answers UNAVAILABLE with `grpc-retry-pushback-ms` for a refusal and
 * DEADLINE_EXCEEDED for a deadline or a stall, and UNAVAILABLE for a dependency failure of the
 * library's own clients (see `grpcRefusalAnswer`), never touching HTTP APIs;
 * errors with no gRPC answer, and every error over other RPC transports (TCP, Redis, NATS, …), get
 * Nest's own RPC answer (`BaseRpcExceptionFilter`: `Internal server error`), since an exception a filter
 * rethrows there is never answered and the caller waits for ever; other contexts (WebSocket, GraphQL)
 * get the exception rethrown untouched for their own handling.
 * Register it globally with `ResilienceModule.forRoot({ exceptionFilter: true })`, or per controller
 * with `@UseFilters(ResilienceExceptionFilter)`. {@link ResilienceBadGatewayFilter} also answers 502
 * when a `@Resilient` method's attempts ran out on its own error. Uses Nest's `HttpAdapterHost` (any
 * platform); without one (constructed by hand) it writes through the Node/Express response API.
 */
@Catch(AnsweredByResilience)
@Injectable()
export class ResilienceExceptionFilter implements ExceptionFilter<unknown> {
  // Nest's own RPC answer, loaded at the first RPC exception this filter has no answer for.
  private rpcFallback:
    { catch(exception: unknown, host: ArgumentsHost): Observable<never> } | undefined;
  private readonly failures: DependencyFailureLog;

  /**
   * @param adapterHost Nest's HTTP adapter host (injected); optional.
   * @param settings the module's options as `ResilienceModule` read them once (injected): `valid.clock`
   *   is the clock of the 502 log's windows; optional (the system clock, also when `valid.clock` is
   *   `undefined`)
   */
  constructor(
    /** Nest's HTTP adapter host, through which answers are written (the Node response API without it). */
    @Optional() protected readonly adapterHost?: HttpAdapterHost,
    @Optional()
    @Inject(RESILIENCE_SETTINGS)
    settings?: { readonly valid: { readonly clock: Clock | undefined } | undefined },
  ) {
    this.failures = new DependencyFailureLog(settings?.valid?.clock ?? SystemClock.instance);
  }

  /**
   * Writes the problem response for `exception`.
   * @returns in a gRPC context, the Observable erroring with the gRPC status Nest's server sends; in
   *   another RPC context, Nest's own RPC answer
   * @throws the exception itself outside HTTP and RPC contexts, or over HTTP when it has no answer for it
   */
  catch(exception: unknown, host: ArgumentsHost): void | Observable<never> {
    if (host.getType() === 'rpc') {
      const answer = grpcAnswer(exception, host, (failure) =>
        this.failures.answered(failure, 'UNAVAILABLE'),
      );
      if (answer !== undefined) return answer;
    }
    if (host.getType() !== 'http') return this.unanswered(exception, host);
    const answer = answerOf(exception, this.problemOptions);
    if (answer === undefined) {
      // A dependency's 429 or 503 passed on with httpExceptionFrom: Nest's own answer, plus the wait
      // the dependency asked for, so the caller backs off as long as it was told to.
      const retryAfter = passedOnRetryAfter(exception);
      if (retryAfter === undefined) return this.unanswered(exception, host);
      const passed = exception as HttpException;
      this.write(host, passed.getStatus(), 'application/json', passed.getResponse(), retryAfter);
      return;
    }
    if (answer.failure !== undefined) this.failures.answered(answer.failure, answer.body.status);
    this.write(host, answer.body.status, PROBLEM_JSON, answer.body, answer.retryAfter);
  }

  /** Writes `body` (as JSON) with `status`, `Content-Type` and, when given, `Retry-After`. */
  private write(
    host: ArgumentsHost,
    status: number,
    contentType: string,
    body: unknown,
    retryAfter: string | undefined,
  ): void {
    const response = host.switchToHttp().getResponse<Record<string, unknown>>();
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter !== undefined) {
      adapter.setHeader(response, 'Content-Type', contentType);
      if (retryAfter !== undefined) adapter.setHeader(response, 'Retry-After', retryAfter);
      // A string body: Nest 11's Express adapter replaces a non-JSON Content-Type on an object body.
      adapter.reply(response, text, status);
      return;
    }
    const raw = response as unknown as {
      headersSent?: boolean;
      statusCode: number;
      setHeader(name: string, value: string): void;
      end(body: string): void;
    };
    if (raw.headersSent) return;
    raw.statusCode = status;
    raw.setHeader('Content-Type', contentType);
    if (retryAfter !== undefined) raw.setHeader('Retry-After', retryAfter);
    raw.end(text);
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
      mergeMap(({ BaseRpcExceptionFilter }) =>
        (this.rpcFallback ??= new BaseRpcExceptionFilter<unknown, never>()).catch(exception, host),
      ),
    );
  }

  /**
   * The problem body and `Retry-After` value (whole seconds as a string) this filter answers `exception`
   * with, or undefined when it answers nothing (the application's own errors). Finds the library's
   * error wherever it is wrapped, as the filter does. Exposed for custom filters (an application's
   * catch-all, Fastify, RPC bridges).
   * @param exception any thrown value
   * @param options `badGateway: true` also answers 502 for a `@Resilient` method's attempts exhausted on its own error
   */
  static problemFor(
    exception: unknown,
    options: ResilienceProblemOptions = NO_OPTIONS,
  ): ResilienceAnswer | undefined {
    const answer = answerOf(exception, options);
    return answer === undefined ? undefined : { body: answer.body, retryAfter: answer.retryAfter };
  }
}

/** The answer to `exception` (see {@link ResilienceExceptionFilter}), with the failure to log for a 502. */
function answerOf(exception: unknown, options: ResilienceProblemOptions): FilterAnswer | undefined {
  const found = findLibraryError(exception);
  if (found !== undefined) {
    const { error, failure } = found;
    if (error instanceof CallRejectedError) return rejected(error);
    if (error instanceof RateLimitedError)
      return refusal('RateLimited', REFUSAL_DETAILS.RateLimited, error.retryAfter);
    if (
      error instanceof DeadlineExceededError ||
      error instanceof AttemptTimeoutError ||
      error instanceof AttemptStalledError
    ) {
      return {
        retryAfter: undefined,
        body: {
          type: ProblemTypes.deadlineExceeded,
          title: 'Gateway Timeout',
          status: HttpStatus.GATEWAY_TIMEOUT,
          // A last attempt that timed out, or an answer that stopped coming, is the same to the caller: the dependency was too slow.
          detail:
            error instanceof AttemptStalledError
              ? 'A dependency of this service stopped sending its answer part-way.'
              : 'A dependency of this service did not answer within the time allowed for this request.',
          reason:
            error instanceof AttemptTimeoutError
              ? 'AttemptTimeout'
              : error instanceof AttemptStalledError
                ? 'AttemptStalled'
                : 'DeadlineExceeded',
        },
      };
    }
    const ending = failure?.ending ?? ENDINGS_BY_NAME[(error as { name?: string }).name ?? ''];
    if (ending !== undefined) return badGateway(ending, failure);
  }
  if (options.badGateway === true && stopReasonOf(exception) === 'attemptsExhausted')
    return badGateway('attemptsExhausted', methodFailureOf(exception));
  return undefined;
}

/** A refusal's answer; a reason outside the documented four gets the generic sentence and `CallRejected` unless it is a name. */
function rejected(error: CallRejectedError): FilterAnswer {
  const reason: unknown = error.reason;
  if (typeof reason === 'string' && Object.hasOwn(REFUSAL_DETAILS, reason))
    return refusal(reason, REFUSAL_DETAILS[reason as RejectionReason], error.retryAfter);
  return refusal(
    typeof reason === 'string' && /^[A-Za-z]\w{0,63}$/.test(reason) ? reason : 'CallRejected',
    GENERIC_REFUSAL,
    error.retryAfter,
  );
}

function refusal(reason: string, meaning: string, retryAfterMs: number | undefined): FilterAnswer {
  const retryAfter = retryAfterMs === undefined ? undefined : formatRetryAfter(retryAfterMs);
  return {
    retryAfter,
    body: {
      type: ProblemTypes.callRejected,
      title: 'Service Unavailable',
      status: HttpStatus.SERVICE_UNAVAILABLE,
      detail:
        `${meaning} (${reason}).` +
        (retryAfter === undefined ? ' Try again later.' : ` Try again in ${retryAfter} s.`),
      reason,
    },
  };
}

function badGateway(
  ending: DependencyFailure['ending'],
  failure: DependencyFailure | undefined,
): FilterAnswer {
  const { reason, detail } = DEPENDENCY_FAILURES[ending];
  return {
    retryAfter: undefined,
    failure,
    body: {
      type:
        ending === 'attemptsExhausted'
          ? ProblemTypes.attemptsExhausted
          : ProblemTypes.dependencyFailed,
      title: 'Bad Gateway',
      status: HttpStatus.BAD_GATEWAY,
      detail,
      reason,
    },
  };
}

/**
 * {@link ResilienceExceptionFilter} with the opt-in 502 of DESIGN §4 for the application's own work:
 * also answers 502 Bad Gateway with the problem body (`urn:nresilience:problem:attempts-exhausted`,
 * reason `AttemptsExhausted`, no `Retry-After`: nothing says when the dependency will be back) when a
 * call's attempts ran out on the work's own error — a `@Resilient` method whose own code failed on
 * every attempt allowed, a gateway's failure rather than this service's. Everything the parent filter
 * answers is answered the same way; an error that stopped a call for any other reason (an answer such
 * as a 404, a permanent verdict, a caller's abort), or that no call rejected with, gets Nest's own
 * handling (`BaseExceptionFilter`: an `HttpException` its status, anything else 500).
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

  /**
   * @param adapterHost Nest's HTTP adapter host (injected); without an adapter, unanswered errors are rethrown.
   * @param settings the module's options as `ResilienceModule` read them once (injected): `valid.clock`
   *   is the clock of the 502 log's windows; optional (the system clock, also when `valid.clock` is
   *   `undefined`)
   */
  constructor(
    @Optional() adapterHost?: HttpAdapterHost,
    @Optional()
    @Inject(RESILIENCE_SETTINGS)
    settings?: { readonly valid: { readonly clock: Clock | undefined } | undefined },
  ) {
    super(adapterHost, settings);
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
