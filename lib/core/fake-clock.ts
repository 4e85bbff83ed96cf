import type { Clock, TimerHandle } from './clock.js';
import { type TimerEntry, TimerHeap } from './timer-heap.js';

/**
 * A clock that moves only when told: the clock for every unit test (DESIGN §3.13, §8).
 *
 * ```ts
 * const clock = new FakeClock();
 * const call = Resilience.default.with({ clock }).run(work);
 * await clock.advance(250); // fires due timers in order, letting promises settle between them
 * ```
 */
export class FakeClock implements Clock {
  private current: number;
  private readonly heap = new TimerHeap();

  /** @param start the initial reading in milliseconds (default 0). */
  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(delay: number, callback: () => void): TimerHandle {
    return this.heap.add(this.current + (delay > 0 ? delay : 0), callback);
  }

  clearTimer(handle: TimerHandle): void {
    this.heap.remove(handle as TimerEntry);
  }

  /** Number of timers set and neither fired nor cleared. */
  get pending(): number {
    return this.heap.size;
  }

  /** Due time of the earliest pending timer, or `undefined` when none is pending. */
  get nextDue(): number | undefined {
    return this.heap.peek()?.due;
  }

  /**
   * Moves time forward by `ms` milliseconds, firing every timer that falls due in order, each at its
   * own due time, and letting pending promise callbacks run after each one (so an awaited executor
   * step can set its next timer within the same advance).
   * @throws RangeError when `ms` is negative or not finite.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      throw new RangeError(`FakeClock.advance: ms must be a finite number >= 0, got ${ms}`);
    }
    const target = this.current + ms;
    await settle();
    for (let next = this.heap.takeDue(target); next !== undefined; next = this.heap.takeDue(target)) {
      this.current = Math.max(this.current, next.due);
      next.callback();
      await settle();
    }
    this.current = target;
    await settle();
  }

  /** Fires timers until none is pending (at most `limit` of them), jumping time to each one. */
  async runAll(limit = 10_000): Promise<void> {
    await settle();
    for (let i = 0; i < limit; i++) {
      const next = this.heap.peek();
      if (next === undefined) return;
      await this.advance(Math.max(0, next.due - this.current));
    }
    throw new Error(`FakeClock.runAll: still ${this.pending} timers pending after ${limit} firings`);
  }
}

/** Lets every queued promise callback run (a macrotask turn drains the microtask queue). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
