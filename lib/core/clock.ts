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

class HeapEntry implements TimerHandle {
  index = -1;
  constructor(
    readonly due: number,
    readonly seq: number,
    readonly callback: () => void,
  ) {}
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

  private readonly heap: HeapEntry[] = [];
  private seq = 0;
  private armed: unknown = undefined;
  private armedDue = Infinity;

  /** @param timers timer primitives; Node's own (unref'd) by default. */
  constructor(private readonly timers: TimerPrimitives = nodeTimers) {}

  now(): number {
    return this.timers.now();
  }

  /** Number of timers set and neither fired nor cleared. */
  get pending(): number {
    return this.heap.length;
  }

  setTimer(delay: number, callback: () => void): TimerHandle {
    const safeDelay = delay > 0 ? delay : 0;
    const entry = new HeapEntry(this.timers.now() + safeDelay, this.seq++, callback);
    this.push(entry);
    if (entry.due < this.armedDue) this.arm();
    return entry;
  }

  clearTimer(handle: TimerHandle): void {
    const entry = handle as HeapEntry;
    if (entry.index < 0) return;
    // The Node timer stays armed: it is unref'd, and re-arming on every call would cost a
    // setTimeout/clearTimeout pair per deadline. When it fires early it finds nothing due and re-arms.
    this.removeAt(entry.index);
  }

  private arm(): void {
    this.disarm();
    const top = this.heap[0];
    if (top === undefined) return;
    const wait = Math.min(Math.max(0, Math.ceil(top.due - this.timers.now())), MAX_TIMER_DELAY);
    this.armedDue = top.due;
    this.armed = this.timers.setTimeout(() => this.fire(), wait);
  }

  private disarm(): void {
    if (this.armed !== undefined) this.timers.clearTimeout(this.armed);
    this.armed = undefined;
    this.armedDue = Infinity;
  }

  private fire(): void {
    this.armed = undefined;
    this.armedDue = Infinity;
    const now = this.timers.now();
    // A chained wait (above 2^31-1 ms) wakes early by design and simply re-arms.
    let top = this.heap[0];
    while (top !== undefined && top.due <= now) {
      this.removeAt(0);
      try {
        top.callback();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
      top = this.heap[0];
    }
    if (this.armed === undefined) this.arm();
  }

  private less(a: HeapEntry, b: HeapEntry): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private push(entry: HeapEntry): void {
    entry.index = this.heap.length;
    this.heap.push(entry);
    this.up(entry.index);
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
