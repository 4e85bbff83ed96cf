import { type TimerEntry, TimerHeap } from './timer-heap.js';

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
   * @returns a handle for {@link Clock.clearTimer}.
   */
  setTimer(delay: number, callback: () => void): TimerHandle;
  /** Cancels a timer; clearing one that already fired or was cleared does nothing. */
  clearTimer(handle: TimerHandle): void;
}

/** Opaque timer handle returned by {@link Clock.setTimer}. */
export interface TimerHandle {
  readonly due: number;
}

/** The largest delay a Node.js timer accepts (2^31-1 ms); longer ones fire after 1 ms. */
export const MAX_TIMER_DELAY = 2_147_483_647;

/** Timer primitives {@link SystemClock} runs on; injectable so the 2^31-1 chaining can be tested. */
export interface TimerPrimitives {
  now(): number;
  setTimeout(callback: () => void, delay: number): unknown;
  clearTimeout(handle: unknown): void;
}

const nodeTimers: TimerPrimitives = {
  now: () => performance.now(),
  setTimeout: (callback, delay) => {
    const handle = setTimeout(callback, delay);
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The production clock: `performance.now()` for time, and one shared, unref'd Node timer armed for
 * the earliest pending deadline of all policies using this clock (an indexed binary heap), so a
 * deadline costs a heap insert instead of a timer and a controller per call (DESIGN §3.2).
 * Timers never keep the process alive.
 */
export class SystemClock implements Clock {
  /** The process-wide instance every policy uses unless given another clock. */
  static readonly instance = new SystemClock();

  private readonly heap = new TimerHeap();
  private armed: unknown = undefined;
  private armedDue = Infinity;

  /** @param primitives timer primitives; Node's own (unref'd) by default. */
  constructor(private readonly primitives: TimerPrimitives = nodeTimers) {}

  now(): number {
    return this.primitives.now();
  }

  /** Number of timers set and neither fired nor cleared. */
  get pending(): number {
    return this.heap.size;
  }

  setTimer(delay: number, callback: () => void): TimerHandle {
    const entry = this.heap.add(this.primitives.now() + (delay > 0 ? delay : 0), callback);
    if (entry.due < this.armedDue) this.arm();
    return entry;
  }

  clearTimer(handle: TimerHandle): void {
    // The Node timer stays armed: it is unref'd, and re-arming on every call would cost a
    // setTimeout/clearTimeout pair per deadline. When it fires early it finds nothing due and re-arms.
    this.heap.remove(handle as TimerEntry);
  }

  private arm(): void {
    this.disarm();
    const top = this.heap.peek();
    if (top === undefined) return;
    const wait = Math.min(Math.max(0, Math.ceil(top.due - this.primitives.now())), MAX_TIMER_DELAY);
    this.armedDue = top.due;
    this.armed = this.primitives.setTimeout(() => this.fire(), wait);
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
