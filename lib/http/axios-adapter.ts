import type {
  AxiosAdapter,
  AxiosHeaders,
  AxiosInstance,
  AxiosResponse,
  InternalAxiosRequestConfig,
} from 'axios';
import {
  AttemptTimeoutError,
  PolicyConfigError,
  WallClock,
  rejectUnknownKeys,
} from '../core/index.js';
import { DEFAULT_MAXIMUM_HOSTS, HostPolicies, type PolicySourceLike } from './host-policies.js';
import { IDEMPOTENCY_KEY_HEADER, NotRepeatableError } from './idempotency.js';
import { HttpCall } from './http-call.js';
import { relayedRefusalOf } from './relayed-refusal.js';

/** Options of {@link installResilientAdapter}. */
export interface ResilientAxiosOptions {
  /** The policy every host starts from: a `Policy`, or a handle (`registry.handle(name)`) that follows reloads. */
  policy: PolicySourceLike;
  /** Most origins with their own breaker, budget and estimators, an integer >= 1. Default 64. */
  maximumHosts?: number;
  /** Send the ambient criticality as `X-NResilience-Criticality`. Default false. */
  propagateCriticality?: boolean;
  /** Wall-clock ms since the epoch, for `Retry-After` dates. Default the system's. */
  wallClock?: () => number;
}

const OPTION_KEYS = ['policy', 'maximumHosts', 'propagateCriticality', 'wallClock'];

/**
 * Runs every request of an axios instance (`HttpService.axiosRef` in Nest) under a policy, at the
 * adapter seam: one attempt = one call of the adapter axios would have used. Request interceptors run
 * once per logical call before it, response interceptors once after it and see only the final
 * response or error; every attempt sends the headers the interceptors set, once (each attempt gets its
 * own copy, stamped with the remaining time, and the first attempt of a call that may retry with
 * `X-NResilience-Retrying: 1`). The attempt's signal goes to
 * axios, which ends the attempt at its bound; axios's own `timeout` is turned off (0) for a bounded
 * attempt, so a slow attempt always ends as the library's `AttemptTimeoutError` /
 * `DeadlineExceededError`, never as axios's `ECONNABORTED` (a `timeout` of the request's own applies
 * only when the policy bounds nothing); with no time left the executor starts no attempt at all. Per-host state, classification (`Classifier.http`:
 * an axios error's `response.status`), idempotency (POST/PATCH only after 429/503 unless
 * `Idempotency-Key` is set, e.g. by `markRepeatable(config, key)`) are those of the resilient fetch.
 * A stream `data` cannot be sent twice: a retry of one fails with `BodyNotReplayableError`. A failed
 * attempt's `responseType: 'stream'` body is destroyed before the next attempt (its socket let go);
 * the last attempt's stays the caller's to read.
 * Errors are those of the resilient fetch: an answer (a 4xx, a 5xx after the last attempt) is the
 * usual `AxiosError` with its `response`; what the library decides is its own error —
 * `NotRepeatableError` (as {@link AxiosNotRepeatableError}, which axios's `isAxiosError` also
 * accepts), `BodyNotReplayableError`, `DeadlineExceededError`, `CallRejectedError` — with the
 * transport's `AxiosError` as `cause` where there was one — and `RelayedRefusalError` for a refusal
 * of one of our services below (a 503 problem of type `urn:nresilience:problem:call-rejected`, read
 * from `data` as axios parsed it: a `responseType: 'stream'` body is not read), at once, as the
 * fetch passes it on.
 * @returns the per-host state (for health)
 * @throws PolicyConfigError naming the option for a bad option
 */
export async function installResilientAdapter(
  instance: AxiosInstance,
  options: ResilientAxiosOptions,
): Promise<HostPolicies> {
  if (options === null || typeof options !== 'object')
    throw new PolicyConfigError('options', options, 'must be an object { policy, … }');
  rejectUnknownKeys(options, OPTION_KEYS, '', 'resilient axios option');
  // Loaded only here: the package's entries load without axios installed.
  const axios = (await import('axios')).default;
  const hosts = new HostPolicies(
    options.policy,
    options.maximumHosts ?? DEFAULT_MAXIMUM_HOSTS,
    options.wallClock,
  );
  const propagateCriticality = options.propagateCriticality === true;
  const original = instance.defaults.adapter;
  const wallClock = options.wallClock ?? WallClock.now;

  const adapter: AxiosAdapter = async (
    config: InternalAxiosRequestConfig,
  ): Promise<AxiosResponse> => {
    const transport = axios.getAdapter(original, config);
    const origin = new URL(instance.getUri(config)).origin;
    const method = (config.method ?? 'get').toUpperCase();
    const data: unknown = config.data;
    const replayable = !(
      typeof data === 'object' &&
      data !== null &&
      typeof (data as { pipe?: unknown }).pipe === 'function'
    );
    const refusalIn = (response: AxiosResponse | undefined) =>
      response === undefined
        ? undefined
        : relayedRefusalOf(
            response.status,
            (name) => axios.AxiosHeaders.from(response.headers as AxiosHeaders).get(name),
            response.data,
            origin,
            wallClock,
          );
    const call = new HttpCall<unknown>(
      hosts.for(origin),
      {
        origin,
        method,
        keyed: config.headers.has(IDEMPOTENCY_KEY_HEADER),
        replayable,
        propagateCriticality,
      },
      release,
    );
    return call.send(
      async (ctx) => {
        call.begin(ctx);
        const headers = axios.AxiosHeaders.from(config.headers);
        call.stampHeaders(headers, ctx);
        const attempt: InternalAxiosRequestConfig = { ...config, headers, signal: ctx.signal };
        // Only the attempt's signal ends a bounded attempt: an axios timer of its own, even with slack,
        // can fire first on a loaded event loop and turn the library's timeout into ECONNABORTED.
        if (ctx.bound !== Infinity) attempt.timeout = 0;
        let response: AxiosResponse;
        try {
          response = await transport(attempt);
        } catch (error) {
          const failed = (error as { response?: AxiosResponse } | undefined)?.response;
          // A refusal by one of our services below is passed on as that refusal, as the fetch does.
          throw call.failed(ctx, refusalIn(failed) ?? error, failed?.data);
        }
        const refused = refusalIn(response);
        if (refused !== undefined) throw call.failed(ctx, refused, response.data);
        return call.answered(ctx, response, response.data);
      },
      // A hedged policy races attempts of a GET, HEAD, OPTIONS or keyed request only (the request's rule).
      { signal: config.signal as AbortSignal | undefined },
      // The caller reads this answer's data; any other (a hedge's loser that answered too) is let go.
      (response) => response.data,
      // As the resilient fetch: a POST that failed once without an answer says why it was not sent
      // again; a failed answer (a 5xx) is the usual axios error, as fetch returns the Response.
      (cause) =>
        isFailedAnswer(config, cause)
          ? cause
          : new AxiosNotRepeatableError(method, instance.getUri(config), cause, config),
      (final) => (final as { response?: { data?: unknown } } | undefined)?.response?.data,
    );
  };
  instance.defaults.adapter = adapter;
  return hosts;
}

/**
 * {@link NotRepeatableError} as the axios seam throws it: a POST or PATCH without an
 * `Idempotency-Key` that failed without an answer (a reset, a timeout) while attempts were left, so
 * was sent once (stop reason `notRepeatable`). It is also an axios error to axios's own guard
 * (`axios.isAxiosError(error)` is true, as an interceptor checks before it reads `error.code` or
 * `error.config`): `config` is always the request's config (as on every axios error); when the
 * failure was an `AxiosError` (a reset: `code` `ECONNRESET`), `code`, `config` and `request` are that
 * error's and `toJSON()` is its snapshot with this name and message; when an attempt timed out
 * (`AttemptTimeoutError`), `code` is the one axios gives its own timeouts (`ECONNABORTED`, or
 * `ETIMEDOUT` with `transitional.clarifyTimeoutError`). `response` is `undefined` (there was no
 * answer). `cause` is the failure itself (the `AxiosError`, or the executor's `AttemptTimeoutError`).
 * `instanceof AxiosError` is false: it is the library's error, as `DeadlineExceededError` and
 * `CallRejectedError` are on this seam.
 */
export class AxiosNotRepeatableError extends NotRepeatableError {
  /** What `axios.isAxiosError` reads. */
  readonly isAxiosError = true;
  /** The failure's axios or socket code (`ECONNRESET`), axios's timeout code for a timed-out attempt. */
  readonly code: string | undefined;
  /** The request config: the failed attempt's when the failure was an `AxiosError`, else the call's. */
  readonly config: InternalAxiosRequestConfig | undefined;
  /** The transport's request object (a `ClientRequest`), when the failure was an `AxiosError`. */
  readonly request: unknown;
  /**
   * Always `undefined`: the request got no answer, or its body broke after the headers (the cause
   * then carries them); a failed answer is the usual axios error.
   */
  readonly response: undefined = undefined;

  /**
   * @param method the request's method, upper-case
   * @param url the request's full URL
   * @param cause the attempt's failure
   * @param config the request's config as the adapter got it (used when `cause` carries none)
   */
  constructor(method: string, url: string, cause: unknown, config?: InternalAxiosRequestConfig) {
    super(method, url, { cause, marking: 'markRepeatable(config, key)' });
    const axiosError = isAxiosError(cause) ? cause : undefined;
    this.config = axiosError?.config ?? config;
    const code =
      axiosError?.code ??
      (cause as { code?: unknown } | undefined)?.code ??
      (cause instanceof AttemptTimeoutError ? timeoutCode(this.config) : undefined);
    this.code = typeof code === 'string' ? code : undefined;
    this.request = axiosError?.request;
  }

  /** The failure's own `toJSON()` snapshot (axios's, its `redact` rule applied) with this error's name, message and code. */
  toJSON(): object {
    const cause = this.cause as { toJSON?: () => object } | undefined;
    const snapshot =
      isAxiosError(cause) && typeof cause.toJSON === 'function' ? cause.toJSON() : {};
    return { ...snapshot, name: this.name, message: this.message, code: this.code };
  }
}

interface AxiosErrorLike {
  readonly isAxiosError: true;
  readonly code?: string;
  readonly config?: InternalAxiosRequestConfig;
  readonly request?: unknown;
  readonly toJSON?: () => object;
}

/**
 * Whether `error` is a failed answer: axios rejected the response for its status (`validateStatus`,
 * as axios's `settle` does), rather than for what broke after the headers (a body aborted mid-way,
 * which axios 1.21 rejects with the response attached: axios/axios#10708).
 */
function isFailedAnswer(config: InternalAxiosRequestConfig, error: unknown): boolean {
  const status = (error as { response?: { status?: unknown } } | undefined)?.response?.status;
  if (typeof status !== 'number') return false;
  const validate = config.validateStatus;
  return typeof validate === 'function' && status !== 0 && !validate(status);
}

/**
 * Lets a failed attempt's connection go before the next attempt: a `responseType: 'stream'` body
 * nobody will read is destroyed, as the resilient fetch cancels one. Unread, it would hold its
 * socket (a keep-alive agent with one socket per host would make the retry wait forever). Any
 * other `data` (a parsed body) holds nothing.
 */
function release(data: unknown): void {
  if (typeof data !== 'object' || data === null) return;
  const stream = data as { pipe?: unknown; destroy?: unknown; destroyed?: unknown };
  if (
    typeof stream.pipe === 'function' &&
    typeof stream.destroy === 'function' &&
    stream.destroyed !== true
  )
    (stream.destroy as () => void)();
}

/** axios's own test (`isAxiosError`), without loading axios. */
function isAxiosError(error: unknown): error is AxiosErrorLike {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { isAxiosError?: unknown }).isAxiosError === true
  );
}

/** The code axios gives a request its own timer ended (its http adapter's `createTimeoutError`). */
function timeoutCode(config: InternalAxiosRequestConfig | undefined): string {
  return config?.transitional?.clarifyTimeoutError === true ? 'ETIMEDOUT' : 'ECONNABORTED';
}
