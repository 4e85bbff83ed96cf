import type { Clock, TimerHandle } from '../time/clock.js';
import { GcraBucket } from './gcra-bucket.js';
import type { ResolvedRateSettings } from './rate-settings.js';
import type { RateGrant, RateStore } from './rate-store.js';

/** How often a degraded limiter asks the store again (ms): recovery is seen within this, while calls flow. */
export const STORE_PROBE_INTERVAL_MS = 500;

/** A change of a shared rate limit's store state: `degraded` (running on the local share) or `shared` again. */
export type StoreStateListener = (state: 'degraded' | 'shared', error: unknown) => void;

/** Tokens leased from the store: spendable from `validAt` until `expiresAt` (clock ms). */
interface Lease {
  count: number;
  readonly validAt: number;
  readonly expiresAt: number;
}

/** Counters of a shared rate limit, for telemetry and health. */
export interface LeaseCounters {
  /** Store requests made (each one round trip). */
  roundTrips: number;
  /** Degraded episodes begun (store down, slow or partitioned). */
  degradedEpisodes: number;
}

/**
 * The token source of a rate limit shared through a {@link RateStore} (DESIGN §3.8): tokens are leased
 * from the store `lease` at a time and spent locally, so a call costs a counter decrement and, at steady
 * state, a process makes one round trip per `lease` calls. The next lease is asked for when half of
 * the current one is spent (no call waits for it then); a lease may be reserved ahead (the store's
 * GCRA places it after the tokens already granted, up to one period ahead), so the fleet's processes
 * share the limit in the order they asked and no one spins on an empty bucket. A lease unspent a
 * period after it became valid is dropped (held tokens are never saved up into a burst).
 *
 * A call never waits on the store longer than `storeWait`: past it, the call is judged by the local
 * share (`limit / expectedInstances`). A request failing or taking longer than `storeTimeout` starts
 * a degraded episode (one `degraded` report): every call runs on the local share, and the store is
 * asked again at most every {@link STORE_PROBE_INTERVAL_MS} ms while calls come; the first lease it
 * grants ends the episode (one `shared` report) and the local share's tokens are dropped, so the
 * return is no burst. Every store promise is observed: a late or failed answer is never an unhandled
 * rejection and never blocks a call.
 * @internal the rate limiter's
 */
export class LeasedRate {
  private leases: Lease[] = [];
  private pending: Promise<void> | undefined = undefined;
  private retryAt = 0;
  private degraded = false;
  private probeAt = 0;
  private local: GcraBucket;
  private waiters = new Set<() => void>();
  readonly counters: LeaseCounters = { roundTrips: 0, degradedEpisodes: 0 };

  constructor(
    private settings: ResolvedRateSettings,
    private readonly store: RateStore,
    private readonly key: string,
    private readonly clock: Clock,
    private readonly onState: StoreStateListener | undefined,
  ) {
    this.local = localShare(settings, clock.now());
  }

  /** Whether the store is failing and calls run on the local share. */
  get isDegraded(): boolean {
    return this.degraded;
  }

  /** The store's own state (`ready`, `down`, …), `degraded` while running on the local share when it says nothing. */
  storeState(): string {
    return this.store.state?.() ?? (this.degraded ? 'degraded' : 'shared');
  }

  /** Leased tokens spendable now. */
  available(now: number): number {
    if (this.degraded) return this.local.available(now);
    let count = 0;
    for (const lease of this.leases)
      if (lease.validAt <= now && lease.expiresAt > now) count += lease.count;
    return count;
  }

  /** Takes a token now when one is there (a leased one, or the local share's while degraded). */
  take(now: number): boolean {
    if (this.degraded) {
      this.probe(now);
      return this.local.take(now);
    }
    const lease = this.current(now);
    if (lease !== undefined && lease.validAt <= now) {
      lease.count--;
      if (lease.count === 0) this.leases.shift();
      this.refill(now);
      return true;
    }
    this.refill(now);
    return false;
  }

  /** Whether a caller finding no token would wait for the store's answer (asked, nothing held or reserved). */
  waitingOnStore(now: number): boolean {
    return !this.degraded && this.pending !== undefined && this.current(now) === undefined;
  }

  /**
   * ms until a token is due without asking the store: a reserved lease becoming valid, or the local
   * share's next token while degraded; `undefined` when none is known.
   */
  waitFor(now: number): number | undefined {
    if (this.degraded) return this.local.nextIn(now);
    const lease = this.current(now);
    return lease === undefined ? undefined : Math.max(0, lease.validAt - now);
  }

  /**
   * Waits for a token and takes it: for the store's answer at most `storeWait` (then, still without
   * one, the call is judged by the local share), for a reserved lease or the local share's next token
   * at most `maximumWait`; never past `deadlineAt`. An abort of `signal` rejects with its reason.
   * @returns whether the caller holds a token; false when none came in time (the caller is refused)
   */
  async acquire(
    maximumWait: number,
    deadlineAt: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    let now = this.clock.now();
    if (this.take(now)) return true;
    if (this.waitingOnStore(now)) {
      await this.until(Math.min(this.settings.storeWait, deadlineAt - now), signal, true);
      now = this.clock.now();
      if (this.take(now)) return true;
      // Still no answer: the store is slow, this call is judged by the local share.
      if (this.waitingOnStore(now)) return this.local.take(now);
    }
    const wait = this.waitFor(now);
    if (wait === undefined || wait > maximumWait || now + wait >= deadlineAt) return false;
    await this.until(wait, signal, false);
    return this.take(this.clock.now());
  }

  /** ms until the store may grant a lease again (after it refused one), at least the spacing of the fleet's tokens. */
  retryIn(now: number): number {
    return Math.max(this.retryAt - now, this.settings.per / this.settings.limit);
  }

  /** Reads new settings (a reload): the local share adopts the new rate, leases already granted stay. */
  reconfigure(settings: ResolvedRateSettings): void {
    this.settings = settings;
    const share = shareOf(settings);
    this.local.reconfigure(share.limit, settings.per, share.burst, this.clock.now());
  }

  /** The first lease not expired (dropping expired ones). */
  private current(now: number): Lease | undefined {
    const leases = this.leases;
    while (leases.length > 0 && (leases[0]!.expiresAt <= now || leases[0]!.count === 0))
      leases.shift();
    return leases[0];
  }

  /** Asks for the next lease when half of what is held is spent and nothing is asked or reserved ahead. */
  private refill(now: number): void {
    if (this.pending !== undefined || now < this.retryAt) return;
    let held = 0;
    for (const lease of this.leases) held += lease.count;
    if (held * 2 > this.settings.lease || this.leases.length > 1) return;
    this.request(now);
  }

  /** While degraded: asks the store again, at most every probe interval. */
  private probe(now: number): void {
    if (this.pending !== undefined || now < this.probeAt) return;
    this.probeAt = now + STORE_PROBE_INTERVAL_MS;
    this.request(now);
  }

  private request(now: number): void {
    const s = this.settings;
    this.counters.roundTrips++;
    let timer: TimerHandle | undefined;
    let settled = false;
    const timeout = new Promise<RateGrant>((_resolve, reject) => {
      timer = this.clock.setTimer(s.storeTimeout, () =>
        reject(new StoreTimeoutError(this.store.name, s.storeTimeout)),
      );
    });
    let asked: Promise<RateGrant>;
    try {
      asked = Promise.resolve(
        this.store.take({
          key: this.key,
          count: s.lease,
          limit: s.limit,
          per: s.per,
          burst: s.burst,
          horizon: s.per,
        }),
      );
    } catch (error) {
      asked = Promise.reject(error);
    }
    // A late answer after the timeout is observed and dropped.
    asked.catch(() => undefined);
    this.pending = Promise.race([asked, timeout])
      .then(
        (grant) => {
          settled = true;
          this.granted(grant, now);
        },
        (error: unknown) => {
          settled = true;
          this.failed(error);
        },
      )
      .finally(() => {
        if (timer !== undefined) this.clock.clearTimer(timer);
        this.pending = undefined;
        if (settled) this.wake();
      });
  }

  private granted(grant: RateGrant, askedAt: number): void {
    const now = this.clock.now();
    if (this.degraded) {
      this.degraded = false;
      // The local share's tokens are not carried into the shared limit.
      this.local = localShare(this.settings, now);
      this.onState?.('shared', undefined);
    }
    if (grant.granted > 0) {
      const validAt = now + Math.max(0, grant.validIn);
      this.leases.push({ count: grant.granted, validAt, expiresAt: validAt + this.settings.per });
    } else {
      // The shared bucket is spent: ask no sooner than it says a lease may come.
      this.retryAt = Math.max(askedAt, now) + Math.max(grant.retryAfter, 1);
    }
  }

  private failed(error: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.counters.degradedEpisodes++;
    this.probeAt = this.clock.now() + STORE_PROBE_INTERVAL_MS;
    this.leases = [];
    this.onState?.('degraded', error);
  }

  /** Waits `ms` on the clock, or until the store answers when `onAnswer`; an abort rejects with its reason. */
  private until(ms: number, signal: AbortSignal | undefined, onAnswer: boolean): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.clock.clearTimer(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = (): void => {
        this.clock.clearTimer(timer);
        this.waiters.delete(done);
        reject(signal!.reason);
      };
      const timer = this.clock.setTimer(ms, done, true);
      if (onAnswer) this.waiters.add(done);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  private wake(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const done of waiting) done();
  }
}

/** A store request that took longer than `storeTimeout`. */
export class StoreTimeoutError extends Error {
  constructor(store: string, ms: number) {
    super(`the ${store} rate store did not answer within ${ms}ms`);
    this.name = 'StoreTimeoutError';
  }
}

function shareOf(settings: ResolvedRateSettings): { limit: number; burst: number } {
  const n = settings.expectedInstances;
  return { limit: settings.limit / n, burst: Math.max(1, Math.floor(settings.burst / n)) };
}

/** The local bucket a process runs on while the store fails: its share of the fleet's limit. */
function localShare(settings: ResolvedRateSettings, now: number): GcraBucket {
  const share = shareOf(settings);
  return new GcraBucket(share.limit, settings.per, share.burst, now);
}
