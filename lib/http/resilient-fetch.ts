import { type Policy, PolicyConfigError, rejectUnknownKeys } from '../core/index.js';
import { POSITIVE_SPAN_RULE, checkValue, given, integerRule } from '../core/internal.js';
import { type FetchFunction, FetchCall, type FetchSettings } from './fetch-call.js';
import { DEFAULT_MAXIMUM_HOSTS, HostPolicies, type PolicySourceLike } from './host-policies.js';
import { HostQuota, Quota } from './quota.js';
import { DEFAULT_MAXIMUM_REPLAY_BYTES } from './request-body.js';

export type { FetchFunction } from './fetch-call.js';

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

const OPTION_KEYS = [
  'policy',
  'fetch',
  'maximumHosts',
  'maximumReplayBytes',
  'bufferResponses',
  'resumeDownloads',
  'bodyGapTimeout',
  'propagateCriticality',
  'quota',
  'wallClock',
];

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
  if (options === null || typeof options !== 'object')
    throw new PolicyConfigError('options', options, 'must be an object { policy, fetch?, … }');
  rejectUnknownKeys(options, OPTION_KEYS, '', 'resilient fetch option');
  const transport = options.fetch ?? globalThis.fetch;
  if (typeof transport !== 'function')
    throw new PolicyConfigError('fetch', options.fetch, 'must be a fetch-compatible function');
  const maximumReplayBytes = checkValue(
    REPLAY_BYTES_RULE,
    'maximumReplayBytes',
    given(options.maximumReplayBytes, DEFAULT_MAXIMUM_REPLAY_BYTES),
  );
  const bodyGapTimeout =
    options.bodyGapTimeout === undefined
      ? undefined
      : checkValue(POSITIVE_SPAN_RULE, 'bodyGapTimeout', options.bodyGapTimeout);
  const quota = options.quota === undefined ? Quota.reserving(0.1) : options.quota;
  if (quota !== false && !(quota instanceof Quota))
    throw new PolicyConfigError('quota', quota, 'must be Quota.reserving(fraction) or false');
  const wallClock = options.wallClock ?? defaultWallClock;
  const bufferResponses = options.bufferResponses === true;
  const resumeDownloads = options.resumeDownloads === true;
  if (resumeDownloads && bufferResponses)
    throw new PolicyConfigError(
      'resumeDownloads',
      true,
      'cannot be combined with bufferResponses: true (a buffered body is retried whole, never resumed)',
    );
  const hosts = new HostPolicies(
    options.policy,
    options.maximumHosts ?? DEFAULT_MAXIMUM_HOSTS,
    options.wallClock,
  );
  const quotas = new WeakMap<Policy, HostQuota>();
  const settings: FetchSettings = Object.freeze({
    transport,
    hosts,
    quotaFor: (policy: Policy): HostQuota | undefined => {
      if (quota === false) return undefined;
      let hostQuota = quotas.get(policy);
      if (hostQuota === undefined) quotas.set(policy, (hostQuota = new HostQuota(quota)));
      return hostQuota;
    },
    maximumReplayBytes,
    bodyGapTimeout,
    bufferResponses,
    resumeDownloads,
    propagateCriticality: options.propagateCriticality === true,
    wallClock,
  });
  const resilientFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    FetchCall.send(settings, input, init);
  return Object.assign(resilientFetch, { hosts });
}
