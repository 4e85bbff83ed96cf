import type { Clock } from '../time/clock.js';
import { WINDOW_RULES } from '../rules/option-rules.js';
import { checkOptions, given } from '../rules/value-rule.js';
import type { RetryBudgetState } from './retry-budget-state.js';

/** Parameters of the sliding-window retry budget (DESIGN §3.5). */
export interface SlidingWindowBudgetOptions {
  /** Most retries per logical call in the window, in [0, 1]. Default 0.1 (retries add at most 10 % load). */
  retryRatio?: number;
  /** Length of the window in ms, in [1000, 86400000] (1 s to 1 day). Default 30000. */
  samplingDuration?: number;
  /** Logical calls the window must hold before the ratio is enforced, an integer >= 1. Default 100. */
  minimumThroughput?: number;
}

/** Slices the window is kept in: the window covers the last 9 to 10 slices (27–30 s at the default). */
const SLICES = 10;

/** Slack for `ratio × calls`: 0.1 × 30 must admit the third retry. */
const EPSILON = 1e-9;

/**
 * Fills defaults and checks ranges (ratio in [0, 1], duration 1 s – 1 day, minimum throughput >= 1).
 * @throws PolicyConfigError naming `budget.retryRatio`, `budget.samplingDuration`,
 *   `budget.minimumThroughput` or an unknown key.
 */
export function validateSlidingWindowOptions(
  options: SlidingWindowBudgetOptions,
): Required<SlidingWindowBudgetOptions> {
  checkOptions(options, WINDOW_RULES, 'budget', 'sliding-window budget option');
  return {
    retryRatio: given(options.retryRatio, 0.1),
    samplingDuration: given(options.samplingDuration, 30_000),
    minimumThroughput: given(options.minimumThroughput, 100),
  };
}

/**
 * The sliding-window retry budget's state (DESIGN §3.5): retries in
 * the last `samplingDuration` ms may be at most `retryRatio` × the logical calls in it; while fewer
 * than `minimumThroughput` calls are in the window every retry is allowed (at low volume
 * `ratio × calls` rounds down to no retry at all). The executor counts each logical call once
 * ({@link SlidingWindowBudget.recordCall}), never each attempt, so retries do not inflate their own
 * allowance; successes fund nothing here ({@link SlidingWindowBudget.deposit} does nothing).
 *
 * The window is kept in 10 slices of `samplingDuration / 10`; a slice's counts leave it whole, so the
 * window reaches back between 90 % and 100 % of `samplingDuration`. Slices are cleared lazily when
 * time reaches them: no timer, O(1) per call.
 */
export class SlidingWindowBudget implements RetryBudgetState {
  private ratio: number;
  private floor: number;
  private width: number;
  private readonly calls = new Float64Array(SLICES);
  private readonly retries = new Float64Array(SLICES);
  private callTotal = 0;
  private retryTotal = 0;
  /** The ring index of the newest slice, and the slice number (now / width) it stands for. */
  private head = 0;
  private headSlice: number;

  /**
   * @param options `retryRatio` (default 0.1), `samplingDuration` (ms, default 30000), `minimumThroughput` (default 100)
   * @param clock the clock the window moves on
   * @throws PolicyConfigError for an option out of range (see {@link validateSlidingWindowOptions}).
   */
  constructor(
    options: SlidingWindowBudgetOptions,
    private readonly clock: Clock,
  ) {
    const settings = validateSlidingWindowOptions(options);
    this.ratio = settings.retryRatio;
    this.floor = settings.minimumThroughput;
    this.width = settings.samplingDuration / SLICES;
    this.headSlice = Math.floor(clock.now() / this.width);
  }

  /** Logical calls and retries counted in the window now. */
  get window(): { readonly calls: number; readonly retries: number } {
    this.advance(this.clock.now());
    return { calls: this.callTotal, retries: this.retryTotal };
  }

  /** Retries the window allows now: ratio × calls, `Infinity` below the throughput floor. */
  get capacity(): number {
    this.advance(this.clock.now());
    return this.callTotal < this.floor ? Infinity : this.ratio * this.callTotal;
  }

  /** Retries still allowed now: the capacity less the retries in the window (`Infinity` below the floor). */
  get level(): number {
    const capacity = this.capacity;
    return capacity === Infinity ? Infinity : Math.max(0, capacity - this.retryTotal);
  }

  /** Share of the window's allowance spent, 0..1: retries ÷ (ratio × calls); 0 below the throughput floor. */
  get utilization(): number {
    this.advance(this.clock.now());
    if (this.callTotal < this.floor) return 0;
    const allowance = this.ratio * this.callTotal;
    return allowance <= 0 ? 1 : Math.min(1, this.retryTotal / allowance);
  }

  /** Whether a retry would be allowed now: the test `tryAcquire` applies, without counting one. */
  get canFundRetry(): boolean {
    this.advance(this.clock.now());
    return this.allows(this.callTotal, this.retryTotal, false);
  }

  /** Counts one logical call (the executor calls it once per call, at its start). */
  recordCall(): void {
    this.advance(this.clock.now());
    this.calls[this.head]++;
    this.callTotal++;
  }

  /** Successes fund nothing in this shape: the allowance follows calls, not successes. */
  deposit(): void {}

  /** The window reads no durations. */
  readonly timesRetries: boolean = false;

  /** Outcomes fund nothing in this shape: the allowance follows calls. */
  recordAttempt(): void {}

  /**
   * Counts a retry if the window allows it.
   * @param sheddable Sheddable work (DESIGN §3.5, §3.9) may retry only while at least half the
   *   allowance would remain after this retry; below the throughput floor it is allowed like any other.
   * @returns false when the retry is refused (nothing is counted then).
   */
  tryAcquire(sheddable = false): boolean {
    this.advance(this.clock.now());
    if (!this.allows(this.callTotal, this.retryTotal, sheddable)) return false;
    this.retries[this.head]++;
    this.retryTotal++;
    return true;
  }

  /** Takes back the newest counted retry: it never reached the dependency (a breaker refused it). */
  refund(): void {
    for (let i = 0; i < SLICES; i++) {
      const index = (this.head - i + SLICES) % SLICES;
      if (this.retries[index] > 0) {
        this.retries[index]--;
        this.retryTotal--;
        return;
      }
    }
  }

  /**
   * Milliseconds until a retry would be allowed if no new call arrived: the time for enough old
   * slices to leave the window (at most `samplingDuration`, when the window empties below the
   * floor); 0 when one is allowed now.
   */
  retryAfter(): number | undefined {
    const now = this.clock.now();
    this.advance(now);
    let calls = this.callTotal;
    let retries = this.retryTotal;
    if (this.allows(calls, retries, false)) return 0;
    // Oldest slice first: slice k (1 = oldest) leaves when the window passes its end.
    for (let k = 1; k <= SLICES; k++) {
      const index = (this.head + k) % SLICES;
      calls -= this.calls[index];
      retries -= this.retries[index];
      if (this.allows(calls, retries, false)) return (this.headSlice + k) * this.width - now;
    }
    return SLICES * this.width;
  }

  /**
   * Adopts new parameters (a config reload), keeping the counts: the slices keep their order and
   * take the new width, so the calls and retries already seen stay in the window.
   * @throws PolicyConfigError for an option out of range (nothing changes then).
   */
  reconfigure(options: SlidingWindowBudgetOptions): void {
    const settings = validateSlidingWindowOptions(options);
    this.advance(this.clock.now());
    this.ratio = settings.retryRatio;
    this.floor = settings.minimumThroughput;
    this.width = settings.samplingDuration / SLICES;
    this.headSlice = Math.floor(this.clock.now() / this.width);
  }

  private allows(calls: number, retries: number, sheddable: boolean): boolean {
    if (calls < this.floor) return true;
    const allowance = this.ratio * calls;
    return retries + 1 <= (sheddable ? allowance / 2 : allowance) + EPSILON;
  }

  /** Clears the slices time has reached since the last reading; a reading that goes back moves nothing. */
  private advance(now: number): void {
    const slice = Math.floor(now / this.width);
    const steps = slice - this.headSlice;
    if (steps <= 0) return;
    for (let i = 1; i <= Math.min(steps, SLICES); i++) {
      const index = (this.head + i) % SLICES;
      this.callTotal -= this.calls[index];
      this.retryTotal -= this.retries[index];
      this.calls[index] = 0;
      this.retries[index] = 0;
    }
    this.head = (this.head + steps) % SLICES;
    this.headSlice = slice;
  }
}
