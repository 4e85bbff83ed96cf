import { type TimerEntry, type TimerHandle, TimerHeap } from './timer-heap.js';

export type { TimerHandle } from './timer-heap.js';

/**
 * Time for every policy: a monotonic reading in milliseconds and cancellable timers.
 *
 * DESIGN §3.13: nothing in `lib/` reads `Date.now()` or calls `setTimeout` directly except
 * {@link SystemClock}; tests drive a `FakeClock`, the simulator a virtual clock.
 */
export interface Clock {
  /** Monotonic time in milliseconds (arbitrary origin). Never goes backwards. */
  now(): number;
  /**
   * Calls `callback` once, `delay` milliseconds from now. Negative or NaN delays count as 0;
   * delays above 2^31-1 ms are honoured in full (never shortened).
   * @param keepAlive true when a caller is waiting on nothing but this timer (a backoff, a guarded
   *   pause): it then keeps the process alive, as a plain `setTimeout` would. Bounds that run beside
   *   an attempt (deadlines, attempt timeouts) leave it false and never hold the process open.
   * @param now the caller's own reading of {@link Clock.now}, taken just before, if it has one: the
   *   delay then counts from it, and a clock whose reading costs something is spared one
   * @returns a handle for {@link Clock.clearTimer}.
   */
  setTimer(delay: number, callback: () => void, keepAlive?: boolean, now?: number): TimerHandle;
  /** Cancels a timer; clearing one that already fired or was cleared does nothing. */
  clearTimer(handle: TimerHandle): void;
}

/** The largest delay a Node.js timer accepts (2^31-1 ms); longer ones fire after 1 ms. */
export const MAX_TIMER_DELAY = 2_147_483_647;

/** Timer primitives {@link SystemClock} runs on; injectable so the 2^31-1 chaining can be tested. */
export interface TimerPrimitives {
  now(): number;
  /** Sets a timer that does not keep the process alive. */
  setTimeout(callback: () => void, delay: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Makes a timer keep the process alive (`true`) or not (`false`). */
  hold(handle: unknown, keepAlive: boolean): void;
}

// Node defines the global `performance` as an accessor that runs a receiver check on every read
// (~6 ns of a ~50 ns clock reading); the object it returns never changes, so it is read once.
const perf = performance;

const nodeTimers: TimerPrimitives = {
  now: () => perf.now(),
  setTimeout: (callback, delay) => {
    const handle = setTimeout(callback, delay);
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  hold: (handle, keepAlive) =>
    void (keepAlive ? (handle as NodeJS.Timeout).ref() : (handle as NodeJS.Timeout).unref()),
};

/**
 * The production clock: `performance.now()` for time, and one shared Node timer armed no later than
 * the earliest pending timer of all policies using this clock (an indexed binary heap), so a deadline
 * costs a heap insert and removal instead of a timer and a controller per call (DESIGN §3.2).
 * The Node timer is unref'd — deadlines and attempt bounds never keep the process alive — except while
 * a `keepAlive` timer (a backoff or guarded pause someone awaits) is pending, so a script awaiting a
 * retry does not exit in the middle of it.
 */
export class SystemClock implements Clock {
  /** The process-wide instance every policy uses unless given another clock. */
  static readonly instance = new SystemClock();

  private readonly heap = new TimerHeap();
  private armed: unknown = undefined;
  private armedDue = Infinity;
  private held = 0;

  /** @param primitives timer primitives; Node's own (unref'd) by default. */
  constructor(private readonly primitives: TimerPrimitives = nodeTimers) {}

  now(): number {
    return this.primitives.now();
  }

  /** Number of timers set and neither fired nor cleared. */
  get pending(): number {
    return this.heap.size;
  }

  setTimer(delay: number, callback: () => void, keepAlive = false, now?: number): TimerHandle {
    const entry = this.heap.add(
      (now ?? this.primitives.now()) + (delay > 0 ? delay : 0),
      callback,
      keepAlive,
    );
    if (keepAlive && this.held++ === 0 && this.armed !== undefined)
      this.primitives.hold(this.armed, true);
    if (entry.due < this.armedDue) this.arm();
    return entry;
  }

  clearTimer(handle: TimerHandle): void {
    // The Node timer stays armed: it is unref'd, and re-arming on every call would cost a
    // setTimeout/clearTimeout pair per deadline. When it fires early it finds nothing due and re-arms.
    const entry = handle as TimerEntry;
    if (this.heap.remove(entry)) this.released(entry);
  }

  private released(entry: TimerEntry): void {
    if (entry.keepAlive && --this.held === 0 && this.armed !== undefined)
      this.primitives.hold(this.armed, false);
  }

  private arm(): void {
    this.disarm();
    const top = this.heap.peek();
    if (top === undefined) return;
    const wait = Math.min(Math.max(0, Math.ceil(top.due - this.primitives.now())), MAX_TIMER_DELAY);
    this.armedDue = top.due;
    this.armed = this.primitives.setTimeout(() => this.fire(), wait);
    if (this.held > 0) this.primitives.hold(this.armed, true);
  }

  private disarm(): void {
    if (this.armed !== undefined) this.primitives.clearTimeout(this.armed);
    this.armed = undefined;
    this.armedDue = Infinity;
  }

  private fire(): void {
    this.armed = undefined;
    this.armedDue = Infinity;
    const now = this.primitives.now();
    // A chained wait (above 2^31-1 ms) wakes early by design and simply re-arms.
    for (let top = this.heap.takeDue(now); top !== undefined; top = this.heap.takeDue(now)) {
      this.released(top);
      try {
        top.callback();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    if (this.armed === undefined) this.arm();
  }
}

/**
 * Wall-clock conversions for wire protocols that carry absolute deadlines (grpc-js takes a deadline
 * as a `Date` or ms since the epoch, and converts it back to a relative `grpc-timeout` with
 * `Date.now()`). Policies never time themselves with it: they use a {@link Clock}.
 */
export const WallClock = {
  /** Wall time now, ms since the epoch (HTTP-dates such as a `Retry-After` date carry wall time). */
  now(): number {
    return Date.now();
  },
  /**
   * The epoch time `ms` milliseconds from now, `Infinity` for `Infinity` (no deadline).
   * @param ms a relative duration in milliseconds
   */
  after(ms: number): number {
    return ms === Infinity ? Infinity : Date.now() + ms;
  },
  /**
   * Milliseconds from now until `deadline` (negative once passed), `Infinity` for no deadline.
   * @param deadline a `Date`, ms since the epoch, or `Infinity`; anything else counts as no deadline
   */
  until(deadline: Date | number | undefined | null): number {
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    if (typeof at !== 'number' || Number.isNaN(at) || at === Infinity) return Infinity;
    return at - Date.now();
  },
} as const;
