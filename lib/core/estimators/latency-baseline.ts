/** Slots the latency baseline spans; the slot width is `baselineWindow / 30` (10 s at the defaults). */
export const BASELINE_SLOTS = 30;

/** Successful durations each slot keeps (its most recent ones). */
export const SAMPLES_PER_SLOT = 16;

/**
 * The breaker's latency baseline: the median duration of successful attempts over the baseline
 * window that ends where the trip window begins (DESIGN §3.6).
 *
 * Approximation, chosen to bound memory and keep recording O(1) and allocation-free: time is cut
 * into 30 slots of `baselineWindow / 30` ms (10 s at the defaults) and each slot keeps its most
 * recent 16 successful durations, so the median is taken over at most 480 samples spread evenly
 * over time (each 10 s weighs at most 16 samples however busy it was). Warmth counts every success
 * in those slots, not only the kept ones. The current slot and the `ceil(tripWindow / slotWidth)`
 * before it (the trip window, rounded out to whole slots) are excluded, so a brownout cannot drag
 * its own yardstick up: the baseline keeps the pre-brownout latency while the trip window fills with
 * slow calls. The median is recomputed once per slot change (every 10 s), never per attempt.
 */
export class LatencyBaseline {
  /** Width of one slot, ms. */
  readonly slotWidth: number;
  private readonly excluded: number;
  private readonly size: number;
  private readonly slotIds: Float64Array;
  private readonly counts: Uint32Array;
  private readonly values: Float64Array;
  private readonly scratch: Float64Array;
  private cachedFor = Number.NaN;
  private cachedMedian = Number.NaN;
  private cachedCount = 0;

  /**
   * @param tripWindow trip window length, ms
   * @param baselineWindow baseline length, ms (≥ tripWindow)
   * @param minimumSamples successes the baseline must hold to be warm
   */
  constructor(
    tripWindow: number,
    baselineWindow: number,
    /** Successes the baseline must hold to be warm (`latencyBaselineSamples`). */
    public minimumSamples: number,
  ) {
    this.slotWidth = baselineWindow / BASELINE_SLOTS;
    this.excluded = Math.ceil(tripWindow / this.slotWidth);
    this.size = BASELINE_SLOTS + this.excluded + 1;
    this.slotIds = new Float64Array(this.size).fill(Number.NaN);
    this.counts = new Uint32Array(this.size);
    this.values = new Float64Array(this.size * SAMPLES_PER_SLOT);
    this.scratch = new Float64Array(BASELINE_SLOTS * SAMPLES_PER_SLOT);
  }

  /**
   * Adds one successful attempt's duration.
   * @param now clock reading, ms
   * @param duration the attempt's duration, ms (negative counts as 0; NaN is ignored)
   */
  add(now: number, duration: number): void {
    if (!(duration >= 0)) {
      if (duration !== duration) return;
      duration = 0;
    }
    const slot = Math.floor(now / this.slotWidth);
    const at = this.position(slot);
    if (this.slotIds[at] !== slot) {
      this.slotIds[at] = slot;
      this.counts[at] = 0;
    }
    const count = this.counts[at]!;
    this.values[at * SAMPLES_PER_SLOT + (count % SAMPLES_PER_SLOT)] = duration;
    this.counts[at] = count + 1;
  }

  /** Successful attempts in the baseline at `now` (ms). */
  count(now: number): number {
    this.refresh(now);
    return this.cachedCount;
  }

  /** True once the baseline holds at least {@link minimumSamples} successes. */
  isWarm(now: number): boolean {
    this.refresh(now);
    return this.cachedCount >= this.minimumSamples;
  }

  /** The baseline median, ms, or `undefined` while the baseline is cold. */
  median(now: number): number | undefined {
    this.refresh(now);
    return this.cachedCount >= this.minimumSamples ? this.cachedMedian : undefined;
  }

  private refresh(now: number): void {
    const current = Math.floor(now / this.slotWidth);
    if (current === this.cachedFor) return;
    this.cachedFor = current;
    const last = current - this.excluded - 1;
    let total = 0;
    let kept = 0;
    for (let slot = last - BASELINE_SLOTS + 1; slot <= last; slot++) {
      const at = this.position(slot);
      if (this.slotIds[at] !== slot) continue;
      const count = this.counts[at]!;
      total += count;
      const stored = count < SAMPLES_PER_SLOT ? count : SAMPLES_PER_SLOT;
      const base = at * SAMPLES_PER_SLOT;
      for (let i = 0; i < stored; i++) this.scratch[kept++] = this.values[base + i]!;
    }
    this.cachedCount = total;
    if (kept === 0) {
      this.cachedMedian = Number.NaN;
      return;
    }
    const sorted = this.scratch.subarray(0, kept).sort();
    const mid = kept >> 1;
    this.cachedMedian = kept % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  }

  private position(slot: number): number {
    const at = slot % this.size;
    return at < 0 ? at + this.size : at;
  }
}
