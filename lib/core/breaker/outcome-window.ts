/** Buckets in the trip window; the bucket width is `tripWindow / TRIP_BUCKETS` (1 s at the defaults). */
export const TRIP_BUCKETS = 30;

/**
 * Time-bucketed attempt counters for the breaker's trip window and error baseline (DESIGN §3.6).
 *
 * Time is cut into buckets of `tripWindow / 30` ms (1 s at the defaults). The trip window is the
 * current bucket and the 29 before it (so it spans between 29 and 30 buckets' worth of time); the
 * error baseline is the `30 × baselineWindow / tripWindow` buckets (300 at the defaults) just
 * before the trip window. The baseline deliberately excludes the trip window, so a jump in the
 * error rate is compared with what came before it rather than diluting its own yardstick.
 *
 * Memory is fixed at construction (three `Uint32Array`s of 330 entries at the defaults); running
 * sums keep every read O(1), and recording is O(1) amortised and allocation-free.
 */
export class OutcomeWindow {
  /** Width of one bucket, ms. */
  readonly bucketWidth: number;
  private readonly size: number;
  private readonly calls: Uint32Array;
  private readonly failures: Uint32Array;
  private readonly slow: Uint32Array;
  private head: number;
  private tripCallSum = 0;
  private tripFailureSum = 0;
  private tripSlowSum = 0;
  private baseCallSum = 0;
  private baseFailureSum = 0;

  /**
   * @param tripWindow trip window length, ms (> 0)
   * @param baselineWindow error baseline length, ms (≥ tripWindow)
   * @param now the clock's current reading, ms
   */
  constructor(tripWindow: number, baselineWindow: number, now: number) {
    this.bucketWidth = tripWindow / TRIP_BUCKETS;
    this.size = TRIP_BUCKETS + Math.ceil((TRIP_BUCKETS * baselineWindow) / tripWindow);
    this.calls = new Uint32Array(this.size);
    this.failures = new Uint32Array(this.size);
    this.slow = new Uint32Array(this.size);
    this.head = Math.floor(now / this.bucketWidth);
  }

  /** Attempts (Ok + Transient) in the trip window. */
  get tripCalls(): number {
    return this.tripCallSum;
  }

  /** Transient attempts in the trip window. */
  get tripFailures(): number {
    return this.tripFailureSum;
  }

  /** Attempts in the trip window that were slow when recorded. */
  get tripSlow(): number {
    return this.tripSlowSum;
  }

  /** Attempts (Ok + Transient) in the error baseline. */
  get baselineCalls(): number {
    return this.baseCallSum;
  }

  /** Transient attempts in the error baseline. */
  get baselineFailures(): number {
    return this.baseFailureSum;
  }

  /**
   * Counts one evidence-bearing attempt (Ok or Transient) in the bucket holding `now`.
   * @param now clock reading, ms (a reading older than the current bucket counts in the current bucket)
   * @param failure true for Transient
   * @param slow true when the attempt was slower than the latency threshold
   */
  record(now: number, failure: boolean, slow: boolean): void {
    this.advance(now);
    const at = this.position(this.head);
    this.calls[at]!++;
    this.tripCallSum++;
    if (failure) {
      this.failures[at]!++;
      this.tripFailureSum++;
    }
    if (slow) {
      this.slow[at]!++;
      this.tripSlowSum++;
    }
  }

  /** Moves the window to `now`: buckets leave the trip window into the baseline, and out of the baseline. */
  advance(now: number): void {
    const target = Math.floor(now / this.bucketWidth);
    if (target <= this.head) return;
    if (target - this.head >= this.size) {
      this.calls.fill(0);
      this.failures.fill(0);
      this.slow.fill(0);
      this.tripCallSum = this.tripFailureSum = this.tripSlowSum = 0;
      this.baseCallSum = this.baseFailureSum = 0;
      this.head = target;
      return;
    }
    while (this.head < target) {
      this.head++;
      // The ring slot of the new head last held the bucket now leaving the baseline.
      const reused = this.position(this.head);
      this.baseCallSum -= this.calls[reused]!;
      this.baseFailureSum -= this.failures[reused]!;
      this.calls[reused] = 0;
      this.failures[reused] = 0;
      this.slow[reused] = 0;
      const aged = this.position(this.head - TRIP_BUCKETS);
      const calls = this.calls[aged]!;
      const failures = this.failures[aged]!;
      this.tripCallSum -= calls;
      this.tripFailureSum -= failures;
      this.tripSlowSum -= this.slow[aged]!;
      this.baseCallSum += calls;
      this.baseFailureSum += failures;
    }
  }

  /**
   * Forgets the trip window (the baseline is kept): the evidence that opened the breaker has been
   * acted on and must neither re-trip it after it closes nor later raise the baseline it is judged by.
   * @param now clock reading, ms
   */
  clearTripWindow(now: number): void {
    this.advance(now);
    for (let i = 0; i < TRIP_BUCKETS; i++) {
      const at = this.position(this.head - i);
      this.calls[at] = 0;
      this.failures[at] = 0;
      this.slow[at] = 0;
    }
    this.tripCallSum = this.tripFailureSum = this.tripSlowSum = 0;
  }

  private position(bucket: number): number {
    const at = bucket % this.size;
    return at < 0 ? at + this.size : at;
  }
}
