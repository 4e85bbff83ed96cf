import type { Clock, RateGrant, RateStore, RateTake } from '../core/index.js';
import { reserveLease } from '../core/internal.js';

/** How a {@link MemoryRateStore} answers: `up`, `down` (every request fails after the round trip) or `partitioned` (no answer ever). */
export type MemoryStoreMode = 'up' | 'down' | 'partitioned';

/** Options of a {@link MemoryRateStore}. */
export interface MemoryRateStoreOptions {
  /** One request's round trip, ms >= 0 (half out, half back). Default 0 (answered on the next turn). */
  readonly roundTrip?: number;
}

/** The error of a request to a store that is `down`. */
export class StoreUnavailableError extends Error {
  constructor() {
    super('the rate store is down');
    this.name = 'StoreUnavailableError';
  }
}

/**
 * A shared rate store in one process, for tests and the simulator: the same lease arithmetic as the
 * Redis store (one GCRA bucket per key), on a clock, with a modelled round trip and outages (`mode`).
 * Several limiters given the same instance behave as processes sharing one Redis.
 */
export class MemoryRateStore implements RateStore {
  readonly name = 'memory';
  /** How it answers now; change it to model an outage or a partition. */
  mode: MemoryStoreMode = 'up';
  /** Requests received so far (round trips). */
  requests = 0;
  private readonly buckets = new Map<string, number>();
  private readonly roundTrip: number;

  /**
   * @param clock the clock of the store (the limiters' own, in a test or a simulation)
   * @throws RangeError for a negative or non-finite round trip
   */
  constructor(
    private readonly clock: Clock,
    options: MemoryRateStoreOptions = {},
  ) {
    const roundTrip = options.roundTrip ?? 0;
    if (!(roundTrip >= 0 && Number.isFinite(roundTrip)))
      throw new RangeError(
        `roundTrip: ${String(roundTrip)} is invalid: must be a finite duration in ms >= 0`,
      );
    this.roundTrip = roundTrip;
  }

  state(): string {
    return this.mode === 'up' ? 'ready' : this.mode;
  }

  take(request: RateTake): Promise<RateGrant> {
    this.requests++;
    const mode = this.mode;
    if (mode === 'partitioned') return new Promise<RateGrant>(() => undefined);
    const half = this.roundTrip / 2;
    return new Promise<RateGrant>((resolve, reject) => {
      this.clock.setTimer(half, () => {
        if (mode === 'down' || this.mode === 'down') {
          this.clock.setTimer(half, () => reject(new StoreUnavailableError()));
          return;
        }
        const now = this.clock.now();
        const decision = reserveLease(
          this.buckets.get(request.key) ?? now,
          now,
          request.count,
          request.limit,
          request.per,
          request.burst,
          request.horizon,
        );
        this.buckets.set(request.key, decision.tat);
        this.clock.setTimer(half, () =>
          resolve({
            granted: decision.granted,
            validIn: Math.max(0, decision.validIn - half),
            retryAfter: decision.retryAfter,
          }),
        );
      });
    });
  }

  /** Forgets every bucket (a store restarted empty). */
  clear(): void {
    this.buckets.clear();
  }
}
