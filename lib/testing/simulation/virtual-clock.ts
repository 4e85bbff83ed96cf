import type { Clock, TimerHandle } from '../../core/clock.js';

/** A pending timer of a {@link VirtualClock}. */
class VirtualTimer implements TimerHandle {
  /** Position in the heap; -1 once fired or cleared. */
  index = -1;
  constructor(
    readonly due: number,
    readonly seq: number,
    readonly callback: () => void,
  ) {}
}

/**
 * The simulator's clock (DESIGN §3.13, §8): time stands still until the driver jumps it to the next
 * due timer. Timers live in an indexed binary heap ordered by due time, then by the order they were
 * set, so two runs that set the same timers fire them in the same order.
 *
 * It never touches real time. {@link VirtualClock.fireDue} is the driver's step: jump to the earliest
 * due timer and fire every timer due at that instant (timers set for the same instant while firing
 * included). The driver lets promise continuations settle between steps.
 *
 * ```ts
 * const clock = new VirtualClock();
 * const policy = Resilience.default.with({ clock });
 * clock.setTimer(250, () => console.log(clock.now())); // 250 once fired
 * clock.fireDue(); // jumps to 250 and fires
 * ```
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  /** Count of timers set or cleared so far: a cheap activity signal for the driver. */
  changes = 0;
  private readonly heap: VirtualTimer[] = [];

  /** @param start the initial reading in ms (default 0). */
  constructor(start = 0) {
    this.current = start;
  }

  /** The virtual time in ms. */
  now(): number {
    return this.current;
  }

  /** Number of timers set and neither fired nor cleared. */
  get pending(): number {
    return this.heap.length;
  }

  /** Due time (ms) of the earliest pending timer, or `undefined` when none is pending. */
  get nextDue(): number | undefined {
    return this.heap[0]?.due;
  }

  /** Calls `callback` once at `now() + delay` (negative or NaN delays count as 0). */
  setTimer(delay: number, callback: () => void): TimerHandle {
    this.changes++;
    const timer = new VirtualTimer(this.current + (delay > 0 ? delay : 0), this.seq++, callback);
    timer.index = this.heap.length;
    this.heap.push(timer);
    this.up(timer.index);
    return timer;
  }

  /** Cancels a timer; clearing one that already fired or was cleared does nothing. */
  clearTimer(handle: TimerHandle): void {
    const timer = handle as VirtualTimer;
    this.changes++;
    if (timer.index >= 0) this.removeAt(timer.index);
  }

  /**
   * Jumps to the earliest pending timer's due time (never backwards) and fires every timer due at
   * that instant, in order, including timers set for that instant by the callbacks themselves.
   * A callback that throws does not stop the others; the first error is rethrown after the batch.
   * @param limit do nothing (and return `false`) when the earliest timer is due after `limit` ms
   * @returns whether any timer fired.
   */
  fireDue(limit = Infinity): boolean {
    const heap = this.heap;
    const first = heap[0];
    if (first === undefined || first.due > limit) return false;
    if (first.due > this.current) this.current = first.due;
    const now = this.current;
    let failure: unknown;
    let failed = false;
    let top: VirtualTimer | undefined = first;
    while (top !== undefined && top.due <= now) {
      this.removeAt(0);
      try {
        top.callback();
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
      top = heap[0];
    }
    if (failed) throw failure;
    return true;
  }

  /**
   * Moves time to `time` ms without firing anything (for the end of a run, once nothing is due
   * before it). Never moves backwards.
   * @throws RangeError when a pending timer is due before `time`.
   */
  jumpTo(time: number): void {
    const first = this.heap[0];
    if (first !== undefined && first.due < time) {
      throw new RangeError(`VirtualClock.jumpTo(${time}): a timer is due at ${first.due}; fire it first`);
    }
    if (time > this.current) this.current = time;
  }

  private less(a: VirtualTimer, b: VirtualTimer): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private removeAt(index: number): void {
    const heap = this.heap;
    const removed = heap[index]!;
    const last = heap.pop()!;
    removed.index = -1;
    if (last !== removed) {
      heap[index] = last;
      last.index = index;
      this.down(index);
      this.up(last.index);
    }
  }

  private up(index: number): void {
    const heap = this.heap;
    const entry = heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (!this.less(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  private down(index: number): void {
    const heap = this.heap;
    const entry = heap[index]!;
    const length = heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && this.less(heap[right]!, heap[left]!) ? right : left;
      if (!this.less(heap[child]!, entry)) break;
      heap[index] = heap[child]!;
      heap[index]!.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}
