/** Slot hold times kept for the refusal hint (the most recent ones). */
export const HOLD_SAMPLES = 64;

/**
 * The most recent slot hold times of a limiter (ms), for the hint a Limited refusal carries: the
 * median time a slot was held is when, typically, one comes free. A fixed ring, so recording is O(1)
 * and allocation-free; the median is computed only when a refusal asks for it.
 * @internal the limiter's
 */
export class HoldTimes {
  private readonly ring = new Float64Array(HOLD_SAMPLES);
  private readonly scratch = new Float64Array(HOLD_SAMPLES);
  private next = 0;
  private count = 0;

  /** Records one hold time in ms (negative counts as 0; NaN is ignored). */
  add(ms: number): void {
    if (ms !== ms) return;
    this.ring[this.next] = ms > 0 ? ms : 0;
    this.next = (this.next + 1) % HOLD_SAMPLES;
    if (this.count < HOLD_SAMPLES) this.count++;
  }

  /** The median of the recorded hold times in ms, `undefined` before the first. */
  median(): number | undefined {
    const n = this.count;
    if (n === 0) return undefined;
    const sorted = this.scratch.subarray(0, n);
    sorted.set(this.ring.subarray(0, n));
    sorted.sort();
    return n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  }
}
