/** Opaque timer handle returned by `Clock.setTimer`: the clock reading (ms) at which it falls due. */
export interface TimerHandle {
  readonly due: number;
}

/** A pending timer in a {@link TimerHeap}. */
export class TimerEntry implements TimerHandle {
  /** Position in the heap; -1 once fired or removed. */
  index = -1;
  constructor(
    /** Clock reading (ms) at which the timer is due. */
    readonly due: number,
    /** Order of setting: ties on `due` fire in the order they were set. */
    readonly seq: number,
    readonly callback: () => void,
    /** Whether the timer keeps the process alive (see `Clock.setTimer`). */
    readonly keepAlive: boolean,
  ) {}
}

/**
 * Pending timers ordered by due time, then by the order they were set: an indexed binary heap, so
 * adding, removing any entry and taking the earliest are O(log n). The one timer structure behind
 * every clock of the library (system, fake and virtual), so all of them fire ties in the same order.
 */
export class TimerHeap {
  private readonly heap: TimerEntry[] = [];
  private seq = 0;

  /** Number of pending timers. */
  get size(): number {
    return this.heap.length;
  }

  /** The earliest pending timer, or `undefined` when none is pending. */
  peek(): TimerEntry | undefined {
    return this.heap[0];
  }

  /** Adds a timer due at `due` ms (a clock reading). */
  add(due: number, callback: () => void, keepAlive = false): TimerEntry {
    const entry = new TimerEntry(due, this.seq++, callback, keepAlive);
    entry.index = this.heap.length;
    this.heap.push(entry);
    this.up(entry.index);
    return entry;
  }

  /** Removes `entry` if it is still pending. @returns whether it was. */
  remove(entry: TimerEntry): boolean {
    if (entry.index < 0) return false;
    this.removeAt(entry.index);
    return true;
  }

  /** Removes and returns the earliest timer if it is due at or before `now`. */
  takeDue(now: number): TimerEntry | undefined {
    const top = this.heap[0];
    if (top === undefined || top.due > now) return undefined;
    this.removeAt(0);
    return top;
  }

  private less(a: TimerEntry, b: TimerEntry): boolean {
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
