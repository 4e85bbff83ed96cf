/** What a {@link RateStore} is asked for: up to `count` tokens of the shared bucket `key`. */
export interface RateTake {
  /** The shared bucket's name (a policy's `key`, or its name). */
  readonly key: string;
  /** Tokens wanted, an integer >= 1 (a lease). */
  readonly count: number;
  /** The bucket: `limit` tokens per `per` ms, at most `burst` at once. */
  readonly limit: number;
  /** The period `limit` counts over, ms. */
  readonly per: number;
  /** Tokens the bucket holds at most (taken at once after a quiet spell). */
  readonly burst: number;
  /** The furthest ahead (ms) a lease may be reserved: a reservation due later is not made. */
  readonly horizon: number;
}

/**
 * A store's answer: `granted` tokens (0 or the `count` asked), spendable from `validIn` ms after the
 * answer arrived; with `granted` 0, `retryAfter` ms until asking again may succeed.
 */
export interface RateGrant {
  /** Tokens granted: the `count` asked, or 0. */
  readonly granted: number;
  /** ms from the answer until the granted tokens may be spent (0: now). */
  readonly validIn: number;
  /** ms until a refused lease may be granted (0 when granted). */
  readonly retryAfter: number;
}

/**
 * A store shared by processes that share a rate limit (a fleet): it keeps one GCRA bucket per key and
 * reserves leases of tokens atomically, so every process together stays within the limit. The Redis
 * store of `@nresilience/nestjs/redis` is one. A store never blocks a call: the limiter bounds every
 * request (`storeWait` for a waiting call, `storeTimeout` for the request) and runs on a local share
 * of the limit while the store fails.
 */
export interface RateStore {
  /** A name for health and logs (`redis`). */
  readonly name: string;
  /**
   * Reserves a lease. Rejects (or never settles) when the store cannot be reached: the limiter
   * bounds it, observes the rejection and degrades.
   */
  take(request: RateTake): Promise<RateGrant>;
  /** The store's connection state for health (`ready`, `connecting`, `down`, …), when it knows one. */
  state?(): string;
}
