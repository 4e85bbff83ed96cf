import { type AttemptContext, GUARDED_PAUSE_MS, HeldCall, type Policy, PolicyConfigError, RateLimitedError, rejectUnknownKeys, reportEvent, sleep } from '../core/index.js';
import { DEFAULT_MAXIMUM_HOSTS, HostPolicies, type PolicySourceLike } from './host-policies.js';
import { IDEMPOTENCY_KEY_HEADER, NotRepeatableError, freshIdempotencyKey, isIdempotentMethod, wantsGeneratedKey } from './idempotency.js';
import { HostQuota, Quota } from './quota.js';
import { BodyNotReplayableError, DEFAULT_MAXIMUM_REPLAY_BYTES, type PreparedBody, prepareBody } from './request-body.js';
import { abortableResponse, bufferedResponse, discard, gapBoundedResponse } from './response-body.js';
import { resumableResponse } from './resume-download.js';
import { marksNestedRetry, stampAttempt } from './stamp.js';
import { bodyFailureMarker, markHttpFailure } from './dependency-failures.js';
import { relayedRefusal } from './relayed-refusal.js';
import { checkValue, given, integerRule, POSITIVE_SPAN_RULE } from '../core/internal.js';

/** A function with `fetch`'s signature: Node's own, undici's, or any compatible one. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Options of {@link createResilientFetch}. All durations are milliseconds. */
export interface ResilientFetchOptions {
  /** The policy every host starts from: a `Policy`, or a handle (`registry.handle(name)`) that follows reloads. */
  policy: PolicySourceLike;
  /** The transport. Default `globalThis.fetch` (Node's undici). */
  fetch?: FetchFunction;
  /** Most origins with their own breaker, budget and estimators, an integer >= 1. Default 64. */
  maximumHosts?: number;
  /** Most bytes of a one-shot stream body buffered so it can be sent again, an integer >= 0. Default 1 MiB. */
  maximumReplayBytes?: number;
  /** Read each response body inside its attempt, so a broken or stalled body is retried. Default false. */
  bufferResponses?: boolean;
  /**
   * Carry a GET's body on where it broke or stalled, with `Range: bytes=<delivered>-` and `If-Range:
   * <ETag>` as the call's next attempt (budget, breaker, backoff, deadline and attempts apply), when
   * the first answer (a 200) had a strong `ETag`, `Accept-Ranges: bytes` and no `Content-Encoding`;
   * only a 206 of that `ETag` starting exactly at the bytes delivered is appended. Anything else fails
   * the read with `ResumeRefusedError` (why, and the bytes delivered) rather than splice. A request
   * with its own `Range` header is not resumed. Not with `bufferResponses` (that retries the whole
   * body instead). Default false.
   */
  resumeDownloads?: boolean;
  /**
   * Silence allowed while a read of an unbuffered response body is pending, > 0. Default the policy's
   * `attemptTimeout` (no bound when it has none).
   */
  bodyGapTimeout?: number;
  /** Send the ambient criticality as `X-NResilience-Criticality`. Default false. */
  propagateCriticality?: boolean;
  /** Refuse locally inside the host's published quota; `false` reads no rate-limit headers. Default `Quota.reserving(0.1)`. */
  quota?: Quota | false;
  /** Wall-clock ms since the epoch, for `Retry-After` dates and epoch resets. Default `performance.timeOrigin + performance.now()`. */
  wallClock?: () => number;
}

/** The resilient fetch: `fetch`'s signature, plus the per-host state for health and telemetry. */
export interface ResilientFetch extends FetchFunction {
  /** Per-origin breakers and budgets (`size`, `entries(limit)`, `unhealthy()`). */
  readonly hosts: HostPolicies;
}

/** `maximumReplayBytes`: a request body up to this size is kept to be sent again. */
const REPLAY_BYTES_RULE = integerRule(0, Number.MAX_SAFE_INTEGER, 'bytes');

const OPTION_KEYS = ['policy', 'fetch', 'maximumHosts', 'maximumReplayBytes', 'bufferResponses', 'resumeDownloads', 'bodyGapTimeout', 'propagateCriticality', 'quota', 'wallClock'];
// RequestInit fields a `Request` input carries that a fresh `fetch(url, init)` must be given again.
const REQUEST_FIELDS = ['cache', 'credentials', 'integrity', 'keepalive', 'mode', 'redirect', 'referrer', 'referrerPolicy'] as const;

const defaultWallClock = (): number => performance.timeOrigin + performance.now();

/**
 * A `fetch` that runs every request under `options.policy`, with a breaker, retry budget and
 * estimators per origin (DESIGN §5). Answers are judged by `Classifier.http`: 5xx, 408 and network
 * failures are retried, 429 and 503 with `Retry-After` wait exactly that long, any other answer comes
 * back as the `Response` it is (and so does the last failed answer when the attempts run out). POST
 * and PATCH are retried only after a definitive refusal unless {@link markRepeatable} (or an
 * `Idempotency-Key` header) makes them repeatable. Bodies, downloads, stamped headers, refusals
 * relayed from below and published quotas: docs/http.md, "What it does with each request".
 *
 * ```ts
 * const http = createResilientFetch({ policy: Resilience.http.with({ name: 'payments', attemptTimeout: 2000 }) });
 * const response = await http('https://payments.internal/charges', markRepeatable({ method: 'POST', body }));
 * ```
 * @param options `policy` (a `Policy` or a handle with `current`), the transport `fetch` (default
 *   `globalThis.fetch`) and the options of {@link ResilientFetchOptions}; durations in ms
 * @throws PolicyConfigError naming the option for an unknown option or a bad value. The fetch it
 *   returns rejects with what the last attempt threw, or with `NotRepeatableError` (a POST stopped by
 *   a reset or timeout), `BodyNotReplayableError` (a one-shot stream over `maximumReplayBytes` to
 *   retry), `CallRejectedError` (budget or breaker), `RelayedRefusalError` (a service below refused
 *   with its own budget, breaker or limiter), `DeadlineExceededError` or `RateLimitedError` (the
 *   published quota's reserve).
 */
export function createResilientFetch(options: ResilientFetchOptions): ResilientFetch {
  if (options === null || typeof options !== 'object') throw new PolicyConfigError('options', options, 'must be an object { policy, fetch?, … }');
  rejectUnknownKeys(options, OPTION_KEYS, '', 'resilient fetch option');
  const transport = options.fetch ?? globalThis.fetch;
  if (typeof transport !== 'function') throw new PolicyConfigError('fetch', options.fetch, 'must be a fetch-compatible function');
  const limit = checkValue(REPLAY_BYTES_RULE, 'maximumReplayBytes', given(options.maximumReplayBytes, DEFAULT_MAXIMUM_REPLAY_BYTES));
  const gapOption = options.bodyGapTimeout === undefined ? undefined : checkValue(POSITIVE_SPAN_RULE, 'bodyGapTimeout', options.bodyGapTimeout);
  const quota = options.quota === undefined ? Quota.reserving(0.1) : options.quota;
  if (quota !== false && !(quota instanceof Quota)) throw new PolicyConfigError('quota', quota, 'must be Quota.reserving(fraction) or false');
  const wallClock = options.wallClock ?? defaultWallClock;
  const buffer = options.bufferResponses === true;
  const resume = options.resumeDownloads === true;
  if (resume && buffer) throw new PolicyConfigError('resumeDownloads', true, 'cannot be combined with bufferResponses: true (a buffered body is retried whole, never resumed)');
  const propagateCriticality = options.propagateCriticality === true;
  const hosts = new HostPolicies(options.policy, options.maximumHosts ?? DEFAULT_MAXIMUM_HOSTS, options.wallClock);
  const quotas = new WeakMap<Policy, HostQuota>();

  const resilientFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : undefined;
    const url = request !== undefined ? request.url : input instanceof URL ? input.href : String(input);
    const origin = new URL(url).origin;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    // As `new Request(input, init)` does: headers given in init replace the request's.
    const headers = new Headers(init?.headers ?? request?.headers);
    if (wantsGeneratedKey(init) || wantsGeneratedKey(request)) headers.set(IDEMPOTENCY_KEY_HEADER, freshIdempotencyKey());
    const facts = { repeatable: isIdempotentMethod(method) || headers.has(IDEMPOTENCY_KEY_HEADER) };
    const body = await prepareBody(init !== undefined && 'body' in init ? init.body : request?.body, limit);
    if (body.contentType !== undefined && !headers.has('content-type')) headers.set('content-type', body.contentType);
    const base: RequestInit = { ...fields(request), ...init, method, body: body.body };
    if (body.streaming) (base as { duplex?: string }).duplex = 'half';
    const signal = init?.signal ?? request?.signal ?? undefined;

    const policy = hosts.for(origin);
    let hostQuota: HostQuota | undefined;
    if (quota !== false) {
      hostQuota = quotas.get(policy);
      if (hostQuota === undefined) quotas.set(policy, (hostQuota = new HostQuota(quota)));
    }
    const clock = policy.options.clock;
    const retrying = marksNestedRetry(policy.options.attempts, facts.repeatable);
    let previous: Response | undefined;
    let failure: unknown;
    let attempts = 0;
    let deadlineAt = Infinity;
    const gap = gapOption ?? policy.options.attemptTimeout;
    // A body read after its attempt resolved can stall; the transport then gets a signal of ours too,
    // so a stall stops whatever it started with it (the attempt's own is never aborted once it resolved).
    const stallable = !buffer && gap !== undefined && method !== 'HEAD';
    let transportAbort: AbortController | undefined;
    const stalled = (error: unknown): void => transportAbort?.abort(error);

    // One attempt of the call; a resumed download's attempts also ask for a range of the body.
    const attempt = async (ctx: AttemptContext, range?: string, etag?: string): Promise<Response> => {
      // The failed answer is not what the caller gets: let its connection go before the retry.
      discard(previous);
      previous = undefined;
      attempts = ctx.attempt;
      if (resume) deadlineAt = ctx.remaining === Infinity ? Infinity : clock.now() + ctx.remaining;
      if (ctx.attempt > 1 && !body.replayable) throw new BodyNotReplayableError(limit, { cause: failure });
      if (hostQuota !== undefined) {
        if (hostQuota.refusal(clock.now()) !== undefined) await refuseByQuota(policy, hostQuota, ctx.attempt, ctx.bound, ctx.signal, origin);
        hostQuota.spend();
      }
      const attemptHeaders = stamp(headers, retrying, ctx.attempt, ctx.bound, propagateCriticality);
      if (range !== undefined) {
        attemptHeaders.set('range', range);
        attemptHeaders.set('if-range', etag!);
      }
      let answer: Response;
      hosts.rememberAbort(ctx.signal, facts);
      try {
        answer = await transport(url, { ...base, headers: attemptHeaders, signal: stallable ? (transportAbort = linked(ctx.signal)).signal : ctx.signal });
        hostQuota?.observe(answer.headers, clock.now(), wallClock());
        if (buffer && method !== 'HEAD') answer = await bufferedResponse(answer);
      } catch (error) {
        hosts.remember(error, facts);
        failure = error;
        throw error;
      }
      if (ctx.signal.aborted) {
        // This attempt already lost to its bound: nobody will read this answer.
        discard(answer);
        throw ctx.signal.reason;
      }
      // A refusal by one of our services below is passed on as that refusal (RelayedRefusalError:
      // Permanent, its reason and hint), never retried through it nor taken for a failing host.
      const refused = await relayedRefusal(answer, origin, wallClock);
      if (refused !== undefined) {
        discard(answer);
        failure = refused;
        throw refused;
      }
      hosts.remember(answer, facts);
      previous = failure = answer;
      return answer;
    };

    // A download that may be resumed stays one call for observers until its body is done.
    const held = resume && method === 'GET' && !headers.has('range') ? new HeldCall() : undefined;
    const response = await policy.run(attempt, { signal, hold: held }).catch((error: unknown) => {
      // Say why a POST that failed once was not sent again, and how to let it (stop reason `notRepeatable`).
      const final = hosts.stoppedAsNotRepeatable(error) && attempts < policy.options.attempts ? new NotRepeatableError(method, url, { cause: error }) : error;
      markHttpFailure(final, failure, policy, origin);
      throw final;
    });
    // The caller owns this answer now: the next attempt (a resume) must not discard it.
    previous = undefined;
    if (held !== undefined && response.status === 200) {
      return abortableResponse(resumableResponse(response, {
        gap,
        clock,
        signal,
        held,
        stalled,
        // The resume request is the call's next attempt: budget, breaker, backoff and deadline apply,
        // and observers see it as an attempt of the held call.
        next: (offset, etag, error) => policy.run((ctx) => attempt(ctx, `bytes=${offset}-`, etag), { signal, hold: held, continuing: { attempts, error, deadlineAt, held } }),
        resumed: () => {
          previous = undefined;
          // `streamResumed` (DESIGN §3.12), an event of the held call.
          held.report({ kind: 'streamResumed', attempt: attempts, verdict: 'Ok' });
        },
      }), signal, bodyFailureMarker(policy, origin));
    }
    held?.end();
    // A buffered body is already read: nothing left for an abort to stop.
    if (buffer) return response;
    // A body that breaks while the caller reads it is the dependency's failure (an exception filter answers 502).
    const broken = bodyFailureMarker(policy, origin);
    return abortableResponse(gap === undefined ? response : gapBoundedResponse(response, gap, clock, stalled, broken), signal, gap === undefined ? broken : undefined);
  };
  return Object.assign(resilientFetch, { hosts });
}

/**
 * A controller aborted when `attempt` (an attempt's signal) aborts, with its reason, and also by us:
 * the transport's signal, so a body that stalls after the attempt resolved stops it too. The
 * listener is on the attempt's own signal, which lives no longer than the attempt.
 */
function linked(attempt: AbortSignal): AbortController {
  const controller = new AbortController();
  if (attempt.aborted) controller.abort(attempt.reason);
  else attempt.addEventListener('abort', () => controller.abort(attempt.reason), { once: true });
  return controller;
}

/** The fields of a `Request` input that `fetch(url, init)` needs to behave the same. */
function fields(request: Request | undefined): RequestInit {
  if (request === undefined) return {};
  const init: Record<string, unknown> = {};
  for (const key of REQUEST_FIELDS) if (request[key] !== undefined) init[key] = request[key];
  return init;
}

/** This attempt's headers: the call's, plus the nested-retry marker, the remaining time and criticality. */
function stamp(headers: Headers, retrying: boolean, attempt: number, bound: number, propagateCriticality: boolean): Headers {
  const stamped = new Headers(headers);
  stampAttempt((name, value) => (value === undefined ? stamped.delete(name) : stamped.set(name, value)), retrying, attempt, bound, propagateCriticality);
  return stamped;
}

/**
 * A local refusal inside the host's published quota: the guarded pause (100 ms, within the attempt's
 * bound), a `rejectedByQuota` event, then `RateLimitedError` (Limited: no breaker evidence) whose
 * `retryAfter` is the time to the reset, read after the pause. A window that reset during the pause
 * lets the attempt go after all. A retry refused here gives back the budget token it was charged: the
 * call never left the process.
 */
async function refuseByQuota(policy: Policy, quota: HostQuota, attempt: number, bound: number, signal: AbortSignal, origin: string): Promise<void> {
  const clock = policy.options.clock;
  await sleep(clock, Math.min(GUARDED_PAUSE_MS, bound), signal);
  const wait = quota.refusal(clock.now());
  if (wait === undefined) return;
  if (attempt > 1) policy.bucket()?.refund();
  reportEvent(policy, { kind: 'rejectedByQuota', attempt, verdict: 'Limited', error: 'RateLimitedError', delay: wait });
  throw new RateLimitedError(`${origin} published quota is inside the reserve until its window resets`, wait);
}
