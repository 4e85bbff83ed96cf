import type { AxiosAdapter, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { Ambient, PolicyConfigError, rejectUnknownKeys } from '../core/index.js';
import { DEFAULT_MAXIMUM_HOSTS, HostPolicies, type PolicySourceLike } from './host-policies.js';
import { IDEMPOTENCY_KEY_HEADER, isIdempotentMethod } from './idempotency.js';
import { BodyNotReplayableError } from './request-body.js';
import { stampAttempt } from './stamp.js';

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
 * axios, and `timeout` becomes the attempt's bound (at least 1 ms; axios reads 0 as no timeout); with
 * no time left the executor starts no attempt at all. Per-host state, classification (`Classifier.http`:
 * an axios error's `response.status`), idempotency (POST/PATCH only after 429/503 unless
 * `Idempotency-Key` is set, e.g. by `markRepeatable(config, key)`) are those of the resilient fetch.
 * A stream `data` cannot be sent twice: a retry of one fails with `BodyNotReplayableError`.
 * @returns the per-host state (for health)
 * @throws PolicyConfigError naming the option for a bad option
 */
export async function installResilientAdapter(instance: AxiosInstance, options: ResilientAxiosOptions): Promise<HostPolicies> {
  if (options === null || typeof options !== 'object') throw new PolicyConfigError('options', options, 'must be an object { policy, … }');
  rejectUnknownKeys(options, OPTION_KEYS, '', 'resilient axios option');
  // Loaded only here: the package's entries load without axios installed.
  const axios = (await import('axios')).default;
  const hosts = new HostPolicies(options.policy, options.maximumHosts ?? DEFAULT_MAXIMUM_HOSTS, options.wallClock);
  const propagateCriticality = options.propagateCriticality === true;
  const original = instance.defaults.adapter;

  const adapter: AxiosAdapter = async (config: InternalAxiosRequestConfig): Promise<AxiosResponse> => {
    const transport = axios.getAdapter(original, config);
    const origin = new URL(instance.getUri(config)).origin;
    const method = (config.method ?? 'get').toUpperCase();
    const facts = { repeatable: isIdempotentMethod(method) || config.headers.has(IDEMPOTENCY_KEY_HEADER) };
    const data: unknown = config.data;
    const replayable = !(typeof data === 'object' && data !== null && typeof (data as { pipe?: unknown }).pipe === 'function');
    const policy = hosts.for(origin);
    const retrying = policy.options.attempts > 1 && facts.repeatable && Ambient.current()?.singleShot !== true;
    let failure: unknown;
    return policy.run(
      async (ctx) => {
        if (ctx.attempt > 1 && !replayable) throw new BodyNotReplayableError(0, { cause: failure });
        const headers = axios.AxiosHeaders.from(config.headers);
        stampAttempt((name, value) => (value === undefined ? headers.delete(name) : headers.set(name, value)), retrying, ctx.attempt, ctx.bound, propagateCriticality);
        const attempt: InternalAxiosRequestConfig = { ...config, headers, signal: ctx.signal };
        if (ctx.bound !== Infinity) attempt.timeout = Math.max(1, Math.ceil(ctx.bound));
        hosts.rememberAbort(ctx.signal, facts);
        try {
          const response = await transport(attempt);
          hosts.remember(response, facts);
          return response;
        } catch (error) {
          hosts.remember(error, facts);
          failure = error;
          throw error;
        }
      },
      { signal: config.signal as AbortSignal | undefined },
    );
  };
  instance.defaults.adapter = adapter;
  return hosts;
}
