/**
 * The last `capacity` outcomes (Ok or Transient) a breaker recorded, none older than `maxAge` ms: a
 * ring of timestamps and failure bits with a running failure count. It is what the breaker's failure
 * trips read (DESIGN §3.6): the share of recent attempts that failed (the failure-rate floor)
 * and the error rate the dependency showed before the current run of failures (which scales how long
 * a run must be to count as evidence).
 *
 * Counting by outcomes and bounding by age makes the estimate fast at high traffic (100 outcomes are
 * a fifth of a second at 500 attempts/s) and honest at low traffic (a quiet service does not judge
 * today's failures against last hour's successes). Memory is fixed at construction; recording is
 * O(1) amortised and allocation-free.
 */
export class RecentOutcomes {
  private readonly times: Float64Array;
  private readonly failed: Uint8Array;
  /** Index of the oldest entry. */
  private tail = 0;
  private size = 0;
  private failureCount = 0;

  /**
   * @param capacity outcomes kept, an integer ≥ 1
   * @param maxAge ms after which an outcome no longer counts, > 0
   */
  constructor(
    readonly capacity: number,
    readonly maxAge: number,
  ) {
    this.times = new Float64Array(capacity);
    this.failed = new Uint8Array(capacity);
  }

  /** Outcomes held (after the last {@link advance}). */
  get count(): number {
    return this.size;
  }

  /** Transient outcomes held. */
  get failures(): number {
    return this.failureCount;
  }

  /** Records an outcome at `now` (ms), dropping the oldest when full and those older than `maxAge`. */
  record(now: number, failure: boolean): void {
    this.advance(now);
    if (this.size === this.capacity) this.dropOldest();
    const index = (this.tail + this.size) % this.capacity;
    this.times[index] = now;
    this.failed[index] = failure ? 1 : 0;
    this.size++;
    if (failure) this.failureCount++;
  }

  /** Drops the outcomes older than `maxAge` at `now`. */
  advance(now: number): void {
    const oldest = now - this.maxAge;
    while (this.size > 0 && this.times[this.tail]! < oldest) this.dropOldest();
  }

  /** Forgets every outcome. */
  clear(): void {
    this.tail = 0;
    this.size = 0;
    this.failureCount = 0;
  }

  private dropOldest(): void {
    if (this.failed[this.tail] === 1) this.failureCount--;
    this.tail = (this.tail + 1) % this.capacity;
    this.size--;
  }
}

/**
 * The shortest run of consecutive failures that is evidence against a dependency failing a share
 * `rate` of attempts independently: the least `n ≥ minimum` with `rate^n ≤ significance` (a run that
 * long would be no likelier than `significance` if nothing had changed). `minimum` when `rate` is 0;
 * `Infinity` when `rate` is 1 or more (a dependency that always fails has no improbable run).
 * @param rate the error rate measured before the run, in [0, 1]
 * @param minimum the shortest run that may trip (`consecutiveFailures`)
 * @param significance the per-run false-trip probability accepted, in (0, 1)
 */
export function evidentRun(rate: number, minimum: number, significance: number): number {
  if (!(rate > 0)) return minimum;
  if (rate >= 1) return Infinity;
  // The slack keeps an exact power (0.1^8 = 10⁻⁸) from rounding up to the next run.
  const n = Math.ceil(Math.log(significance) / Math.log(rate) - 1e-9);
  return n > minimum ? n : minimum;
}
