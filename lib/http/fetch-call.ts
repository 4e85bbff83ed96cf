import { type AttemptContext, HeldCall, type Policy } from '../core/index.js';
import type { HostPolicies } from './host-policies.js';
import { HttpCall } from './http-call.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  NotRepeatableError,
  freshIdempotencyKey,
  wantsGeneratedKey,
} from './idempotency.js';
import type { HostQuota } from './quota.js';
import { type PreparedBody, prepareBody } from './request-body.js';
import {
  abortableResponse,
  bufferedResponse,
  discard,
  gapBoundedResponse,
} from './response-body.js';
import { resumableResponse } from './resume-download.js';
import { bodyFailureMarker } from './dependency-failures.js';
import { relayedRefusal } from './relayed-refusal.js';

/** A function with `fetch`'s signature: Node's own, undici's, or any compatible one. */
export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

/** The resilient fetch's checked options, read once when it is created. Durations in ms. */
export interface FetchSettings {
  readonly transport: FetchFunction;
  readonly hosts: HostPolicies;
  /** The host's quota tracker, `undefined` when quotas are off; every attempt's admission asks it (`RunOptions.quota`). */
  readonly quotaFor: (policy: Policy) => HostQuota | undefined;
  readonly maximumReplayBytes: number;
  readonly bodyGapTimeout: number | undefined;
  readonly bufferResponses: boolean;
  readonly resumeDownloads: boolean;
  readonly propagateCriticality: boolean;
  readonly wallClock: () => number;
}

// RequestInit fields a `Request` input carries that a fresh `fetch(url, init)` must be given again.
const REQUEST_FIELDS = [
  'cache',
  'credentials',
  'integrity',
  'keepalive',
  'mode',
  'redirect',
  'referrer',
  'referrerPolicy',
] as const;

/**
 * One request of the resilient fetch: what the request is (read once from `input` and `init`), the
 * outbound protocol of its call ({@link OutboundCall}), and its attempts on the transport.
 */
export class FetchCall {
  private readonly call: HttpCall<Response>;
  private readonly quota: HostQuota | undefined;
  /** Silence allowed while a body read is pending, ms (the option, else the policy's attempt timeout). */
  private readonly gap: number | undefined;
  // A body read after its attempt resolved can stall; the transport then gets a signal of ours too,
  // so a stall stops whatever it started with it (the attempt's own is never aborted once it resolved).
  private readonly stallable: boolean;
  private transportAbort: AbortController | undefined;
  /** Each answer's transport controller: when attempts overlap (a hedge), the caller's answer's is the one a stall stops. */
  private readonly transports = new WeakMap<Response, AbortController>();
  /** When the latest attempt's call must end (clock ms), for a resumed download's continuation. */
  private deadlineAt = Infinity;
  private readonly stalled = (error: unknown): void => this.transportAbort?.abort(error);

  private constructor(
    private readonly settings: FetchSettings,
    private readonly url: string,
    private readonly origin: string,
    private readonly method: string,
    private readonly headers: Headers,
    private readonly body: PreparedBody,
    private readonly base: RequestInit,
    private readonly signal: AbortSignal | undefined,
  ) {
    const policy = settings.hosts.for(origin);
    this.call = new HttpCall<Response>(
      policy,
      {
        origin,
        method,
        keyed: headers.has(IDEMPOTENCY_KEY_HEADER),
        replayable: body.replayable,
        maximumReplayBytes: settings.maximumReplayBytes,
        propagateCriticality: settings.propagateCriticality,
      },
      discard,
    );
    this.quota = settings.quotaFor(policy);
    this.gap = settings.bodyGapTimeout ?? policy.options.attemptTimeout;
    this.stallable = !settings.bufferResponses && this.gap !== undefined && method !== 'HEAD';
  }

  /** Reads the request from `input` and `init` (as `new Request(input, init)` would) and runs it. */
  static async send(
    settings: FetchSettings,
    input: string | URL | Request,
    init: RequestInit | undefined,
  ): Promise<Response> {
    const request = input instanceof Request ? input : undefined;
    const url =
      request !== undefined ? request.url : input instanceof URL ? input.href : String(input);
    const origin = new URL(url).origin;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    // As `new Request(input, init)` does: headers given in init replace the request's.
    const headers = new Headers(init?.headers ?? request?.headers);
    if (wantsGeneratedKey(init) || wantsGeneratedKey(request))
      headers.set(IDEMPOTENCY_KEY_HEADER, freshIdempotencyKey());
    const body = await prepareBody(
      init !== undefined && 'body' in init ? init.body : request?.body,
      settings.maximumReplayBytes,
    );
    if (body.contentType !== undefined && !headers.has('content-type'))
      headers.set('content-type', body.contentType);
    const base: RequestInit = { ...fields(request), ...init, method, body: body.body };
    if (body.streaming) (base as { duplex?: string }).duplex = 'half';
    const signal = init?.signal ?? request?.signal ?? undefined;
    return new FetchCall(settings, url, origin, method, headers, body, base, signal).run();
  }

  private async run(): Promise<Response> {
    const { call, method, signal } = this;
    const policy = call.policy;
    // A download that may be resumed stays one call for observers until its body is done.
    const held =
      this.settings.resumeDownloads && method === 'GET' && !this.headers.has('range')
        ? new HeldCall()
        : undefined;
    // A hedged policy races attempts of a GET, HEAD, OPTIONS or keyed request only: the request's
    // own rule, never the policy's `repeatable`. Why a POST that failed once was not sent again, and
    // how to let it: NotRepeatableError (stop reason `notRepeatable`). The caller owns the answer:
    // the next attempt (a resume) must not discard it; any other is let go.
    const response = await call.send(
      (ctx) => this.attempt(ctx),
      { signal, hold: held, quota: this.quota },
      (answer) => answer,
      (cause) => new NotRepeatableError(method, this.url, { cause }),
    );
    this.transportAbort = this.transports.get(response) ?? this.transportAbort;
    if (held !== undefined && response.status === 200) return this.resumable(response, held);
    held?.end();
    // A buffered body is already read: nothing left for an abort to stop.
    if (this.settings.bufferResponses) return response;
    // A body that breaks while the caller reads it is the dependency's failure (an exception filter answers 502).
    const broken = bodyFailureMarker(policy, this.origin);
    const gap = this.gap;
    return abortableResponse(
      gap === undefined
        ? response
        : gapBoundedResponse(response, gap, policy.options.clock, this.stalled, broken),
      signal,
      gap === undefined ? broken : undefined,
    );
  }

  /** One attempt of the call; a resumed download's attempts also ask for a range of the body. */
  private async attempt(ctx: AttemptContext, range?: string, etag?: string): Promise<Response> {
    const { call, settings } = this;
    const clock = call.policy.options.clock;
    // The failed answer is not what the caller gets: `begin` lets its connection go before the
    // retry, and refuses a second send of a body that cannot be sent again.
    call.begin(ctx);
    if (settings.resumeDownloads)
      this.deadlineAt = ctx.remaining === Infinity ? Infinity : clock.now() + ctx.remaining;
    const headers = new Headers(this.headers);
    call.stampHeaders(headers, ctx);
    if (range !== undefined) {
      headers.set('range', range);
      headers.set('if-range', etag!);
    }
    let answer: Response;
    const transportAbort = this.stallable ? linked(ctx.signal) : undefined;
    if (transportAbort !== undefined) this.transportAbort = transportAbort;
    try {
      answer = await settings.transport(this.url, {
        ...this.base,
        headers,
        signal: transportAbort?.signal ?? ctx.signal,
      });
      this.quota?.observe(answer.headers, clock.now(), settings.wallClock());
      if (settings.bufferResponses && this.method !== 'HEAD')
        answer = await bufferedResponse(answer);
    } catch (error) {
      throw call.failed(ctx, error);
    }
    if (transportAbort !== undefined) this.transports.set(answer, transportAbort);
    if (ctx.signal.aborted) {
      // This attempt already lost (to its bound, or to another attempt of a hedged race): nobody will read this answer.
      discard(answer);
      throw ctx.signal.reason;
    }
    // A refusal by one of our services below is passed on as that refusal (RelayedRefusalError:
    // Permanent, its reason and hint), never retried through it nor taken for a failing host.
    const refused = await relayedRefusal(answer, this.origin, settings.wallClock);
    if (refused !== undefined) {
      discard(answer);
      throw call.failed(ctx, refused);
    }
    return call.answered(ctx, answer, answer);
  }

  /** The first answer of a download that may be resumed: its body carries on where it broke or stalled. */
  private resumable(response: Response, held: HeldCall): Response {
    const { call, signal } = this;
    const policy = call.policy;
    return abortableResponse(
      resumableResponse(response, {
        gap: this.gap,
        clock: policy.options.clock,
        signal,
        held,
        stalled: this.stalled,
        // The resume request is the call's next attempt: budget, breaker, backoff and deadline apply,
        // and observers see it as an attempt of the held call.
        next: (offset, etag, error) =>
          policy.run((ctx) => this.attempt(ctx, `bytes=${offset}-`, etag), {
            signal,
            hold: held,
            repeatable: false,
            quota: this.quota,
            facts: call.facts,
            continuing: { attempts: call.attempts, error, deadlineAt: this.deadlineAt, held },
          }),
        resumed: (answer) => {
          call.keep(answer);
          // `streamResumed` (DESIGN §3.12), an event of the held call.
          held.report({ kind: 'streamResumed', attempt: call.attempts, verdict: 'Ok' });
        },
      }),
      signal,
      bodyFailureMarker(policy, this.origin),
    );
  }
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
