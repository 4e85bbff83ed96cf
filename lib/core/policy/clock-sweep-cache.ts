/** One cached entry: its key, value, second-chance bit and ring position. */
interface Slot<K, V> {
  readonly key: K;
  readonly value: V;
  referenced: boolean;
  readonly index: number;
}

/** Entries examined per insertion before the one under the hand is evicted regardless of its bit. */
export const DEFAULT_SWEEP_LIMIT = 64;

/**
 * A bounded map with approximate least-recently-used eviction by the clock (second-chance) sweep,
 * used by `PolicyScope` (DESIGN §3.11).
 *
 * - {@link get} of a cached key sets its reference bit: O(1), no allocation, no scan, never blocks.
 * - {@link set} of a new key fills a free ring slot while there is one; once `capacity` keys are held
 *   it advances the hand: a referenced entry loses its bit and is passed over (its second chance), the
 *   first unreferenced one is evicted and its slot reused. A sweep examines at most `sweepLimit`
 *   entries; if all of them were referenced, the entry under the hand is evicted anyway. So an
 *   insertion costs O(1) (at most `sweepLimit` steps) and the cache never holds more than `capacity`
 *   entries.
 * - New entries start unreferenced: a key seen once (a scan of one-off keys) is the first to go,
 *   while a key looked up again since the hand last passed survives the next sweep.
 *
 * Not thread-safe in the shared-memory sense (JavaScript runs it on one thread; nothing here awaits).
 */
export class ClockSweepCache<K, V> {
  private readonly map = new Map<K, Slot<K, V>>();
  private readonly ring: (Slot<K, V> | undefined)[] = [];
  private readonly free: number[] = [];
  private hand = 0;

  /**
   * @param capacity the most entries held, an integer >= 1 (checked by the caller)
   * @param sweepLimit entries an insertion examines at most before evicting the one under the hand,
   *   an integer >= 1; default {@link DEFAULT_SWEEP_LIMIT}
   */
  constructor(
    /** The most entries held. */
    readonly capacity: number,
    private readonly sweepLimit = DEFAULT_SWEEP_LIMIT,
  ) {}

  /** Number of entries held (<= `capacity`). */
  get size(): number {
    return this.map.size;
  }

  /** The value for `key` (setting its reference bit), or `undefined` when not cached. */
  get(key: K): V | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    if (!slot.referenced) slot.referenced = true;
    return slot.value;
  }

  /** The value for `key` without touching its reference bit, or `undefined`. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  /** Whether `key` is cached (no reference-bit update). */
  has(key: K): boolean {
    return this.map.has(key);
  }

  /**
   * Caches `value` under `key` (unreferenced), evicting one entry when the cache is full. Replacing
   * the value of a cached key keeps its slot and bit.
   * @returns the evicted entry, or `undefined` when nothing was evicted
   */
  set(key: K, value: V): { key: K; value: V } | undefined {
    const existing = this.map.get(key);
    if (existing !== undefined) {
      const slot: Slot<K, V> = {
        key,
        value,
        referenced: existing.referenced,
        index: existing.index,
      };
      this.ring[slot.index] = slot;
      this.map.set(key, slot);
      return undefined;
    }
    let evicted: { key: K; value: V } | undefined;
    let index: number;
    if (this.free.length > 0) index = this.free.pop()!;
    else if (this.ring.length < this.capacity) index = this.ring.length;
    else {
      index = this.sweep();
      const victim = this.ring[index]!;
      this.map.delete(victim.key);
      evicted = { key: victim.key, value: victim.value };
    }
    const slot: Slot<K, V> = { key, value, referenced: false, index };
    this.ring[index] = slot;
    this.map.set(key, slot);
    return evicted;
  }

  /** Removes `key`. @returns whether it was cached. */
  delete(key: K): boolean {
    const slot = this.map.get(key);
    if (slot === undefined) return false;
    this.map.delete(key);
    this.ring[slot.index] = undefined;
    this.free.push(slot.index);
    return true;
  }

  /** Removes every entry. */
  clear(): void {
    this.map.clear();
    this.ring.length = 0;
    this.free.length = 0;
    this.hand = 0;
  }

  /** The cached keys, oldest insertion first (a snapshot: safe to modify the cache while using it). */
  keys(): K[] {
    return [...this.map.keys()];
  }

  /**
   * Calls `visit` for up to `limit` entries, oldest insertion first, without touching reference bits.
   * `visit` must not modify the cache.
   */
  forEach(limit: number, visit: (value: V, key: K) => void): void {
    let left = limit;
    for (const slot of this.map.values()) {
      if (left-- <= 0) return;
      visit(slot.value, slot.key);
    }
  }

  /** Advances the hand to the victim's ring index (the ring is full: every slot is occupied). */
  private sweep(): number {
    const ring = this.ring;
    const length = ring.length;
    for (let step = 0; step < this.sweepLimit; step++) {
      const slot = ring[this.hand]!;
      if (!slot.referenced) return this.advance();
      slot.referenced = false;
      this.hand = this.hand + 1 === length ? 0 : this.hand + 1;
    }
    return this.advance();
  }

  private advance(): number {
    const index = this.hand;
    this.hand = index + 1 === this.ring.length ? 0 : index + 1;
    return index;
  }
}
