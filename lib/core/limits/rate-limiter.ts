import { PolicyConfigError } from '../errors.js';
import type { Clock } from '../time/clock.js';
import { sleep } from '../time/sleep.js';
import type { SlotOutcome } from './concurrency-limiter.js';
import { GcraBucket } from './gcra-bucket.js';
import { LeasedRate, type StoreStateListener } from './leased-rate.js';
import { QueueExit } from './limit-queue.js';
import type { ResolvedRateSettings } from './rate-settings.js';

/** A reading of a rate limiter, for health, `describe` and gauges. */
export interface RateLimiterSnapshot {
  readonly kind: 'rate';
  /** Calls allowed per `per` ms. */
  readonly limit: number;
  /** ms */
  readonly per: number;
  /** Calls that may start at once. */
  readonly burst: number;
  /** Whole tokens that could be taken now. */
  readonly available: number;
  /** Tokens granted (calls let through) since it was created. */
  readonly granted: number;
  /** Calls refused (no token within their wait) since it was created. */
  readonly refused: number;
  /** For a limit shared through a store: its state, round trips and degraded episodes; else `undefined`. */
  readonly shared: SharedRateSnapshot | undefined;
}

/** The store side of a shared rate limit's reading. */
export interface SharedRateSnapshot {
  /** The store's name (`redis`). */
  readonly store: string;
  /** The bucket's key in the store. */
  readonly key: string;
  /** The store's state as it reports it (`ready`, `connecting`, `down`, …), or `shared` / `degraded`. */
  readonly state: string;
  /** Whether calls run on the local share now (the store failing). */
  readonly degraded: boolean;
  /** Store requests made (one round trip each). */
  readonly roundTrips: number;
  /** Degraded episodes begun. */
  readonly degradedEpisodes: number;
}

/** What a rate limiter is told besides its settings and clock. */
export interface RateLimiterContext {
  /** The bucket's key in a shared store when the settings name none (the policy's name). */
  readonly name?: string;
  /** Told when a shared limit degrades to the local share and when it is shared again. */
  readonly onStoreState?: StoreStateListener;
}

/**
 * The live state of a rate limit of this process (DESIGN §3.8): at most `limit` attempts start per
 * `per` ms, `burst` at once after a quiet spell (GCRA, see the bucket). An attempt finding no token is
 * refused (Limited, `retryAfter` the exact ms until the next token) after the guarded pause, or waits
 * for its token when that comes within `maximumWait` and before its deadline. One instance per policy
 * name (pinned across reloads, which adopt a new rate without refilling or emptying it) or per key.
 */
export class RateLimiter {
  private configured: ResolvedRateSettings;
  private readonly bucket: GcraBucket;
  private readonly leased: LeasedRate | undefined;
  private readonly key: string | undefined;
  private grantedCount = 0;
  private refusedCount = 0;

  /**
   * @param settings the limit (from `Limit.rate`)
   * @param clock the clock tokens are counted on (and waits run on)
   * @param context the shared bucket's default key and the store-state listener
   * @throws PolicyConfigError (field `limit.rate.key`) for a shared limit with neither a key nor a name
   */
  constructor(
    settings: ResolvedRateSettings,
    private readonly clock: Clock,
    context: RateLimiterContext = {},
  ) {
    this.configured = settings;
    this.bucket = new GcraBucket(settings.limit, settings.per, settings.burst, clock.now());
    if (settings.store !== undefined) {
      const key = settings.key ?? context.name;
      if (key === undefined || key === '')
        throw new PolicyConfigError(
          'limit.rate.key',
          settings.key,
          'is required for a rate limit shared through a store when the policy has no name',
        );
      this.key = key;
      this.leased = new LeasedRate(settings, settings.store, key, clock, context.onStoreState);
    }
  }

  /** The settings it runs on now (the latest {@link RateLimiter.reconfigure}'s). */
  get settings(): ResolvedRateSettings {
    return this.configured;
  }

  /** Calls allowed per `per` ms now. */
  get limit(): number {
    return this.configured.limit;
  }

  /** A reading for health and telemetry. */
  snapshot(): RateLimiterSnapshot {
    const s = this.configured;
    const now = this.clock.now();
    const leased = this.leased;
    const shared =
      leased === undefined
        ? undefined
        : {
            store: s.store!.name,
            key: this.key!,
            state: leased.storeState(),
            degraded: leased.isDegraded,
            roundTrips: leased.counters.roundTrips,
            degradedEpisodes: leased.counters.degradedEpisodes,
          };
    return {
      kind: 'rate',
      limit: s.limit,
      per: s.per,
      burst: s.burst,
      available: leased === undefined ? this.bucket.available(now) : leased.available(now),
      granted: this.grantedCount,
      refused: this.refusedCount,
      shared,
    };
  }

  /** Takes a token when one is there now (shared: a leased one, no store round trip). @returns true when the attempt may start */
  tryAcquire(): boolean {
    const now = this.clock.now();
    if (this.leased === undefined ? this.bucket.take(now) : this.leased.take(now)) {
      this.grantedCount++;
      return true;
    }
    return false;
  }

  /**
   * Whether a caller that found no token may wait for the next one: `maximumWait` allows that long and
   * it is due before `deadlineAt`. When not, the call is refused (Limited).
   * @param deadlineAt clock reading (ms) of the caller's deadline; `Infinity` for none
   */
  canWaitUntil(deadlineAt: number): boolean {
    const now = this.clock.now();
    const leased = this.leased;
    // A shared limit's first lease (or one the store is slow with) is waited for, at most storeWait.
    if (leased?.waitingOnStore(now) === true && deadlineAt > now) return true;
    const wait = this.configured.maximumWait;
    if (!(wait > 0)) return this.refuse();
    const due = leased === undefined ? this.bucket.nextIn(now) : leased.waitFor(now);
    return due !== undefined && due <= wait && now + due < deadlineAt ? true : this.refuse();
  }

  /**
   * Waits for the next token (call after {@link canWaitUntil} said yes): reserves it now, so callers
   * are served in arrival order, and resolves `QueueExit.Granted` when it is due. When `signal` aborts
   * first, the token goes back and the promise rejects with the signal's reason (the timer cleared,
   * the listener removed). A shared limit waits for the store's answer at most `storeWait` (then the
   * call is judged by the local share), for a reserved lease at most `maximumWait`, and resolves
   * `QueueExit.Refused` when no token came.
   * @param deadlineAt the caller's deadline, clock ms
   * @param signal the caller's cancellation (not aborted yet), if any
   */
  async wait(deadlineAt: number, signal: AbortSignal | undefined): Promise<QueueExit> {
    if (this.leased !== undefined) {
      if (!(await this.leased.acquire(this.configured.maximumWait, deadlineAt, signal))) {
        this.refusedCount++;
        return QueueExit.Refused;
      }
      this.grantedCount++;
      return QueueExit.Granted;
    }
    const due = this.bucket.reserve(this.clock.now());
    try {
      await sleep(this.clock, due, signal);
    } catch (reason) {
      this.bucket.giveBack();
      throw reason;
    }
    this.grantedCount++;
    return QueueExit.Granted;
  }

  /** Nothing to give back: a token is spent when the attempt starts. */
  release(_heldFor: number, _outcome: SlotOutcome): void {}

  /** The hint a Limited refusal carries: the exact ms until the next token (0 when one is there now). */
  refusalRetryAfter(): number {
    const now = this.clock.now();
    if (this.leased === undefined) return this.bucket.nextIn(now);
    return this.leased.waitFor(now) ?? this.leased.retryIn(now);
  }

  /**
   * Takes new settings keeping what was spent: the tokens owed stay owed at the new rate (no refill, no
   * reset); a smaller burst caps what was saved up.
   */
  reconfigure(settings: ResolvedRateSettings): void {
    this.configured = settings;
    this.bucket.reconfigure(settings.limit, settings.per, settings.burst, this.clock.now());
    this.leased?.reconfigure(settings);
  }

  private refuse(): false {
    this.refusedCount++;
    return false;
  }
}
