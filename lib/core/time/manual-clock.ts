import type { Clock } from './clock.js';
import { type TimerEntry, type TimerHandle, TimerHeap } from './timer-heap.js';

/**
 * A clock whose time moves only when its driver moves it: the shared base of the test clock
 * (`FakeClock`, moved by `advance`) and the simulator's `VirtualClock` (jumped to the next due timer).
 * Timers live in the same timer heap as the system clock's, so every clock fires ties in the
 * order they were set. Subclasses add the way time moves; this base never touches real time.
 */
export abstract class ManualClock implements Clock {
  /** The reading in ms; subclasses move it forward, never backwards. */
  protected current: number;
  /** Pending timers, earliest first. @internal */
  protected readonly heap = new TimerHeap();

  /** @param start the initial reading in milliseconds (default 0). */
  constructor(start = 0) {
    this.current = start;
  }

  /** The manual time in ms. */
  now(): number {
    return this.current;
  }

  /** Calls `callback` once at `now() + delay` (negative or NaN delays count as 0). */
  setTimer(delay: number, callback: () => void): TimerHandle {
    return this.heap.add(this.current + (delay > 0 ? delay : 0), callback);
  }

  /** Cancels a timer; clearing one that already fired or was cleared does nothing. */
  clearTimer(handle: TimerHandle): void {
    this.heap.remove(handle as TimerEntry);
  }

  /** Number of timers set and neither fired nor cleared. */
  get pending(): number {
    return this.heap.size;
  }

  /** Due time (ms) of the earliest pending timer, or `undefined` when none is pending. */
  get nextDue(): number | undefined {
    return this.heap.peek()?.due;
  }
}
