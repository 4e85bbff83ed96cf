import type { BreakerState } from '../core/index.js';

/** Name of the meter and of the tracer (DESIGN §7; the same as the .NET library's, so fleets read as one). */
export const INSTRUMENTATION_NAME = 'nresilience';

/** Names of the instruments recorded (DESIGN §7). */
export const MetricNames = {
  /** Counter (observable, monotonic): logical calls, one per call, on its terminal event (`policy`, `outcome`, `reason`). */
  calls: 'nresilience.calls',
  /** Counter (observable, monotonic): attempts that reached the dependency (`policy`, `outcome` = the attempt's verdict). */
  attempts: 'nresilience.attempts',
  /** Counter: refusals by a guard of this process (`policy`, `reason`). */
  rejections: 'nresilience.rejections',
  /** Counter: hedged attempts started (`policy`). */
  hedges: 'nresilience.hedges',
  /** Counter: calls a hedge answered first (a terminal event with `hedgeWon`) (`policy`). */
  hedgeWins: 'nresilience.hedge_wins',
  /** Counter: attempts ended by a stall (`AttemptStalledError`) (`policy`). */
  stalls: 'nresilience.stalls',
  /** Counter: streams that resumed after a failure (`policy`). */
  streamResumed: 'nresilience.stream_resumed',
  /**
   * Counter: calls that may retry started while serving a request whose caller may retry it too (the
   * `nestedRetry` event: `X-NResilience-Retrying: 1` inbound), one per call (`policy`, host or service).
   */
  nestedRetries: 'nresilience.nested_retries',
  /** Counter: degraded episodes of a shared rate limit (its store failed; calls ran on the local share) (`policy`). */
  limiterDegraded: 'nresilience.limiter.degraded',
  /** Histogram: duration of a logical call, ms (`policy`, `outcome`, `reason`). */
  callDuration: 'nresilience.call.duration',
  /** Observable gauge: breaker state per policy, coded by {@link BREAKER_STATE_VALUES}. */
  breakerState: 'nresilience.breaker.state',
  /** Observable gauge: retry-budget utilization per policy, 0 (full bucket) to 1 (empty). */
  budgetUtilization: 'nresilience.budget.utilization',
  /**
   * Observable gauge: calls a concurrency limit allows in flight now (`Limit.concurrency`'s, or the
   * adaptive limit's current value), per policy and per host or service for keyed instances.
   */
  limit: 'nresilience.limit',
  /** Observable gauge: calls holding a slot of the policy's concurrency limit now (series as `nresilience.limit`). */
  inflight: 'nresilience.inflight',
  /** Counter: config reloads of a Nest registry (`outcome` = `reloaded` / `reloadFailed`). */
  configReloads: 'nresilience.config.reloads',
} as const;

/** Attribute keys. Values are bounded sets: never a URL path, an id or anything from the protected call. */
export const TelemetryAttributes = {
  /** The policy's name. */
  policy: 'nresilience.policy',
  /** The dependency's host: a per-origin HTTP policy's `host[:port]`, or `TelemetryOptions.host`. */
  host: 'nresilience.host',
  /** The dependency's service: a per-service gRPC policy's `package.Service`, or `TelemetryOptions.service`. */
  service: 'nresilience.service',
  /**
   * Calls: `succeeded`, `answered` (a Permanent verdict ended it: an answer such as a 404, reason
   * `permanent`), `fallback` (the policy's fallback served it; the reason says why the call itself
   * stopped), `failed` or `rejected`; attempts: the verdict (`Ok`, `Transient`, …).
   */
  outcome: 'nresilience.outcome',
  /** Spans: what the policy's fallback made of the call, `served` or `failed` (it threw); absent when none ran. */
  fallback: 'nresilience.fallback',
  /** The stop reason (calls) or the refusal reason (rejections). */
  reason: 'nresilience.reason',
  /** Spans: the ambient criticality of the call, by level name (`critical` when unlabeled). */
  criticality: 'nresilience.criticality',
  /** Span events: the attempt number. */
  attempt: 'nresilience.attempt',
  /** Span events: the attempt's duration (ms). */
  duration: 'nresilience.duration_ms',
  /** Span events: the backoff before the next attempt (ms). */
  delay: 'nresilience.delay_ms',
  /** Span events: the error's `name`. */
  errorType: 'exception.type',
} as const;

/** Values of the `nresilience.breaker.state` gauge, from healthy to cut off. */
export const BREAKER_STATE_VALUES: Readonly<Record<BreakerState, number>> = Object.freeze({
  closed: 0,
  recovering: 1,
  halfOpen: 2,
  open: 3,
  isolated: 4,
});

/** Bucket boundaries (ms) advised for `nresilience.call.duration`. */
export const CALL_DURATION_BUCKETS_MS: readonly number[] = Object.freeze([
  1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000,
]);
