import type { Clock } from '../time/clock.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { HoldTimes } from './hold-times.js';
import { LimitQueue, type QueueExit } from './limit-queue.js';
import type { ResolvedConcurrencySettings } from './limit-settings.js';

/** What an attempt that held a slot tells the limiter when it gives the slot back. */
export const SlotOutcome = Object.freeze({
  /** It answered (Ok): its duration is a latency sample. */
  Answered: 0,
  /** It was dropped: an attempt timeout, a Transient or a Throttled failure (a sign of load). */
  Dropped: 1,
  /** No evidence: a Permanent answer, the caller's abort, a drain, a refusal of another guard. */
  Ignored: 2,
} as const);
/** One of the {@link SlotOutcome} values. */
export type SlotOutcome = (typeof SlotOutcome)[keyof typeof SlotOutcome];

/** A reading of a limiter, for health, `describe` and gauges. */
export interface LimiterSnapshot {
  /** `concurrency` (a fixed bulkhead) or `adaptive`. */
  readonly kind: 'concurrency' | 'adaptive';
  /** Calls allowed in flight at once now. */
  readonly limit: number;
  /** Calls holding a slot now. */
  readonly inflight: number;
  /** Callers waiting for a slot now. */
  readonly queued: number;
  /** The most callers that may wait. */
  readonly queue: number;
  /** The adaptive limit's no-load latency (ms), `undefined` for a fixed one or before its first window. */
  readonly noLoadLatency: number | undefined;
}

/**
 * The live state of a concurrency limit (DESIGN §3.8): at most `limit` attempts hold a slot at once;
 * a caller finding none free waits in a FIFO queue of at most `queue` (or is refused: Limited). The
 * limit is fixed (`Limit.concurrency`) or discovered from latency (`Limit.adaptive`: gradient on
 * measured latency). One instance per policy name (pinned across reloads) or per key.
 *
 * Every slot taken is given back exactly once, by {@link ConcurrencyLimiter.release}; the executor
 * does it on every outcome. The free-slot path ({@link ConcurrencyLimiter.tryAcquire} then
 * `release`) is a counter increment and decrement and a write to a fixed ring: no allocation.
 */
export class ConcurrencyLimiter {
  private current: number;
  private held = 0;
  private queueCapacity: number;
  private readonly waiting = new LimitQueue();
  private readonly holds = new HoldTimes();
  private adaptive: AdaptiveLimit | undefined;
  private kindName: 'concurrency' | 'adaptive';
  private configured: ResolvedConcurrencySettings;
  /** When each call holding a slot per call took it (clock ms); `undefined` while slots are held per attempt. */
  private callHolds: WeakMap<object, number> | undefined = undefined;

  /**
   * @param settings the limit (from `Limit.concurrency` / `Limit.adaptive`)
   * @param clock the clock queued callers' deadlines and the adaptive windows run on
   * @param paused while it answers true, the adaptive limit learns nothing (event-loop saturation)
   */
  constructor(
    settings: ResolvedConcurrencySettings,
    private readonly clock: Clock,
    private readonly paused: () => boolean = never,
  ) {
    this.kindName = settings.kind;
    this.configured = settings;
    this.queueCapacity = settings.queue;
    if (settings.kind === 'adaptive') {
      this.adaptive = new AdaptiveLimit(settings, clock.now());
      this.current = this.adaptive.limit;
    } else {
      this.adaptive = undefined;
      this.current = settings.limit;
    }
  }

  /** The settings it runs on now (the latest {@link reconfigure}'s). */
  get settings(): ResolvedConcurrencySettings {
    return this.configured;
  }

  /** Calls allowed in flight at once now. */
  get limit(): number {
    return this.current;
  }

  /** Calls holding a slot now. */
  get inflight(): number {
    return this.held;
  }

  /** Callers waiting for a slot now. */
  get queued(): number {
    return this.waiting.size;
  }

  /** A reading for health and telemetry. */
  snapshot(): LimiterSnapshot {
    return {
      kind: this.kindName,
      limit: this.current,
      inflight: this.held,
      queued: this.waiting.size,
      queue: this.queueCapacity,
      noLoadLatency: this.adaptive?.noLoadLatency,
    };
  }

  /**
   * Takes a slot when one is free and nobody is waiting ahead (FIFO: a newcomer never overtakes the
   * queue). @returns true when the caller now holds a slot
   */
  tryAcquire(): boolean {
    if (this.held < this.current && this.waiting.size === 0) {
      this.held++;
      this.adaptive?.admitted(this.held);
      return true;
    }
    this.adaptive?.refused();
    return false;
  }

  /** Whether a caller that found no free slot may wait for one (the queue has room). */
  get canWait(): boolean {
    return this.waiting.size < this.queueCapacity;
  }

  /**
   * {@link ConcurrencyLimiter.canWait}: the queue has room (a queued caller's deadline ends its wait).
   * @param _deadlineAt the caller's deadline, clock ms
   */
  canWaitUntil(_deadlineAt: number): boolean {
    return this.canWait;
  }

  /**
   * Waits in the queue for a slot (call after {@link tryAcquire} said no and {@link canWait} yes).
   * Resolves `QueueExit.Granted` once the caller holds a slot (give it back with `release`), or
   * `QueueExit.Expired` when `deadlineAt` passed first (it holds nothing); rejects with the signal's
   * reason, holding nothing, when `signal` aborts first.
   * @param deadlineAt clock reading (ms) at which the caller stops waiting; `Infinity` for never
   * @param signal the caller's cancellation (not aborted yet), if any
   */
  wait(deadlineAt: number, signal: AbortSignal | undefined): Promise<QueueExit> {
    return this.waiting.enqueue(this.clock, deadlineAt, signal);
  }

  /**
   * Gives a slot back and hands it to the first queued caller when the limit allows.
   * @param heldFor how long the slot was held, ms (its attempt's duration)
   * @param outcome what the attempt showed (the adaptive limit learns from it)
   */
  release(heldFor: number, outcome: SlotOutcome): void {
    this.held--;
    this.holds.add(heldFor);
    const adaptive = this.adaptive;
    if (adaptive !== undefined && outcome !== SlotOutcome.Ignored) {
      const now = this.clock.now();
      if (this.paused()) adaptive.discard(now);
      else if (adaptive.sample(now, heldFor, outcome === SlotOutcome.Dropped))
        this.current = adaptive.limit;
    }
    this.grant();
  }

  /**
   * Whether a call keeps its slot from its first admission to its end, through backoff and retries,
   * and the limit learns from the whole call. False — the library's choice, docs/limits.md measures
   * both — is a slot per attempt, given back while the call waits in backoff.
   * @internal the simulator's comparison of the two holds
   */
  get holdsPerCall(): boolean {
    return this.callHolds !== undefined;
  }

  /**
   * Makes this limiter hold its slots per call ({@link ConcurrencyLimiter.holdsPerCall}); before its first call.
   * @internal `Limit.heldPerCall`'s
   */
  holdPerCall(): this {
    this.callHolds ??= new WeakMap();
    return this;
  }

  /**
   * A slot held per call ({@link ConcurrencyLimiter.holdsPerCall}) was taken by `holder` now.
   * @internal the executor's
   */
  heldBy(holder: object): void {
    this.callHolds?.set(holder, this.clock.now());
  }

  /**
   * Gives back the slot `holder` held per call, held since {@link ConcurrencyLimiter.heldBy}.
   * @internal the executor's
   */
  releaseHeld(holder: object, outcome: SlotOutcome): void {
    const now = this.clock.now();
    const since = this.callHolds?.get(holder) ?? now;
    this.callHolds?.delete(holder);
    this.release(now - since, outcome);
  }

  /**
   * Takes new settings, keeping the slots held and the callers waiting: a smaller limit admits nobody
   * new until in-flight falls under it; a larger one starts queued callers at once. An adaptive limit
   * keeps what it learned (its limit clamped into the new bounds); a change of kind starts the new
   * kind's limit (a fixed `concurrency`, or the adaptive `initial`). A smaller queue keeps the callers
   * already waiting and turns away newcomers until it has room.
   */
  reconfigure(settings: ResolvedConcurrencySettings): void {
    this.configured = settings;
    this.queueCapacity = settings.queue;
    if (settings.kind === 'adaptive') {
      if (this.adaptive === undefined)
        this.adaptive = new AdaptiveLimit(settings, this.clock.now());
      else this.adaptive.rebound(settings);
      this.current = this.adaptive.limit;
    } else {
      this.adaptive = undefined;
      this.current = settings.limit;
    }
    this.kindName = settings.kind;
    this.grant();
  }

  /**
   * The hint a Limited refusal carries (ms): the median time a slot was held recently — when one
   * typically comes free; `undefined` before any slot was given back (nothing is known yet).
   */
  refusalRetryAfter(): number | undefined {
    return this.holds.median();
  }

  private grant(): void {
    while (this.held < this.current && this.waiting.size > 0) {
      this.held++;
      this.adaptive?.admitted(this.held);
      this.waiting.grantNext();
    }
  }
}

function never(): boolean {
  return false;
}
