import type { Verdict } from '../classification/verdict.js';

/**
 * What the executor, health and telemetry read from a retry budget's state, whatever its shape: a
 * `TokenBucket` (`RetryBudget.automatic`, `of`, `shared`) or a `SlidingWindowBudget`
 * (`RetryBudget.slidingWindow`).
 */
export interface RetryBudgetState {
  /** Retries the state can fund at most now (tokens held when full; for a window, ratio × calls). */
  readonly capacity: number;
  /** Retries it can fund now. */
  readonly level: number;
  /** Share of the capacity spent, 0..1. */
  readonly utilization: number;
  /** Whether a retry would be funded now (without spending). */
  readonly canFundRetry: boolean;
  /**
   * True when the state reads the durations of retries ({@link recordAttempt}): the executor then
   * times every attempt after the first, even where nothing else needs a clock reading.
   */
  readonly timesRetries: boolean;
  /** One logical call started (counted once per call, never per attempt). */
  recordCall(): void;
  /** A successful attempt (a first attempt that succeeded without going through {@link recordAttempt}). */
  deposit(): void;
  /**
   * What the executor tells the budget after every attempt it records: the evidence an adaptive
   * budget weighs (a token bucket deposits on `Ok` here, as {@link deposit} does). A first attempt
   * that simply succeeds may be told through {@link deposit} instead.
   * @param attempt the attempt's number, 1 for the first (2 and up are retries)
   * @param verdict its verdict (`Limited` is never evidence: this process refused itself)
   * @param duration its duration in ms; 0 when nothing timed it (a retry is timed when
   *   {@link timesRetries} is true)
   * @param error what it threw, `undefined` when it returned a value
   */
  recordAttempt(attempt: number, verdict: Verdict, duration: number, error: unknown): void;
  /**
   * Funds one retry, or refuses it (nothing spent).
   * @param sheddable Sheddable work (DESIGN §3.5): funded only while at least half the capacity would remain.
   */
  tryAcquire(sheddable?: boolean): boolean;
  /** Gives back the retry last funded: it never reached the dependency. */
  refund(): void;
  /** Ms until a retry could be funded (0 now), `undefined` when unknown. */
  retryAfter(): number | undefined;
}
