import type { Verdict } from '../classification/verdict.js';
import type { Clock } from '../time/clock.js';
import { BUCKET_RULES } from '../rules/option-rules.js';
import { checkOptions, given } from '../rules/value-rule.js';
import type { RetryBudgetState } from './retry-budget-state.js';

/** Parameters of a token-bucket retry budget (DESIGN §3.5). */
export interface RetryBudgetOptions {
  /** Tokens deposited per successful attempt, in [0, 1]. Default 0.1 (retries ≤ 10 % of successes). */
  fraction?: number;
  /** Tokens the floor refills per second: 0 (no floor) or in [1/86400 (one a day), 1e6]. Default 3. */
  minimumPerSecond?: number;
}

/** Capacity used when the floor is 0 (10 s of a zero floor would hold nothing): deposits still fund retries. */
export const MINIMUM_CAPACITY = 10;

/** Slack for summed fractions: ten deposits of 0.1 add up to 0.9999999999999999 and must fund a retry. */
const EPSILON = 1e-9;

/** Seconds of floor the bucket holds (capacity = 10 × `minimumPerSecond`). */
const CAPACITY_SECONDS = 10;

/**
 * The retry budget's token bucket. A success deposits `fraction`; the floor accrues
 * `minimumPerSecond` per second; each retry spends one whole token. Starts full.
 * Capacity is `10 × minimumPerSecond`, or {@link MINIMUM_CAPACITY} when that is smaller.
 */
export class TokenBucket implements RetryBudgetState {
  /** Tokens a successful attempt deposits. */
  protected fraction: number;
  /** Tokens the floor accrues per ms. */
  protected perMs: number;
  /** Tokens held at most. */
  protected cap: number;
  /** Tokens held now (as of the last refill). */
  protected tokens: number;
  private refilledAt: number;

  /**
   * @param options `fraction` (tokens per success, default 0.1) and `minimumPerSecond` (floor, default 3)
   * @param clock the clock the floor accrues on
   * @throws PolicyConfigError when `fraction` is outside [0, 1] or `minimumPerSecond` is negative.
   */
  constructor(
    options: RetryBudgetOptions,
    /** The clock the floor accrues on. */
    protected readonly clock: Clock,
  ) {
    const settings = validateBudgetOptions(options);
    this.fraction = settings.fraction;
    this.perMs = settings.minimumPerSecond / 1000;
    this.cap = capacityFor(settings.minimumPerSecond);
    this.tokens = this.cap;
    this.refilledAt = clock.now();
  }

  /** Largest number of tokens the bucket holds. */
  get capacity(): number {
    return this.cap;
  }

  /** Tokens available now (after refilling from the floor). */
  get level(): number {
    this.refill(this.clock.now());
    return this.tokens;
  }

  /** Share of the capacity spent, 0..1 (0 = full bucket, 1 = empty). */
  get utilization(): number {
    return 1 - this.level / this.cap;
  }

  /** A static bucket reads no durations. */
  readonly timesRetries: boolean = false;

  /** Calls fund nothing here (successes do): nothing to count. */
  recordCall(): void {}

  /** A successful attempt deposits (as {@link deposit}); other outcomes change nothing here. */
  recordAttempt(_attempt: number, verdict: Verdict, _duration?: number, _error?: unknown): void {
    if (verdict.kind === 'Ok') this.deposit();
  }

  /** A successful attempt deposits `fraction` tokens (never beyond capacity). */
  deposit(): void {
    const tokens = this.tokens + this.fraction;
    this.tokens = tokens > this.cap ? this.cap : tokens;
  }

  /**
   * Spends one token for a retry.
   * @param sheddable Sheddable work (DESIGN §3.5) spends only while at least half the capacity would
   *   remain after this token; default false.
   * @returns false when the bucket cannot fund the retry (nothing is spent then).
   */
  tryAcquire(sheddable = false): boolean {
    this.refill(this.clock.now());
    const reserve = sheddable ? this.cap / 2 : 0;
    if (this.tokens - 1 < reserve - EPSILON) return false;
    const tokens = this.tokens - 1;
    this.tokens = tokens > 0 ? tokens : 0;
    return true;
  }

  /** Gives back the token of a retry that never reached the dependency (a breaker refused it). */
  refund(): void {
    const tokens = this.tokens + 1;
    this.tokens = tokens > this.cap ? this.cap : tokens;
  }

  /** Whether a retry could be funded now: the test `tryAcquire` applies, without spending. */
  get canFundRetry(): boolean {
    return this.level - 1 >= -EPSILON;
  }

  /**
   * Milliseconds until the floor accrues the missing part of one token, computed from a freshly
   * refilled bucket; 0 when a token is already there; `undefined` when the floor is 0 (only
   * successes can refill it, and when is unknown).
   */
  retryAfter(): number | undefined {
    this.refill(this.clock.now());
    const missing = 1 - this.tokens;
    if (missing <= EPSILON) return 0;
    if (this.perMs === 0) return undefined;
    return missing / this.perMs;
  }

  /** Adopts new parameters (a config reload) keeping the current level, clamped to the new capacity. */
  reconfigure(options: RetryBudgetOptions): void {
    const settings = validateBudgetOptions(options);
    this.refill(this.clock.now());
    this.fraction = settings.fraction;
    this.perMs = settings.minimumPerSecond / 1000;
    this.cap = capacityFor(settings.minimumPerSecond);
    if (this.tokens > this.cap) this.tokens = this.cap;
  }

  /** Accrues the floor up to `now` (ms on the bucket's clock), never beyond capacity. */
  protected refill(now: number): void {
    const elapsed = now - this.refilledAt;
    // Zero or negative elapsed time accrues nothing; the reading still moves forward only.
    if (elapsed <= 0) return;
    this.refilledAt = now;
    if (this.tokens >= this.cap) return;
    const tokens = this.tokens + elapsed * this.perMs;
    this.tokens = tokens > this.cap ? this.cap : tokens;
  }
}

/** Tokens a bucket with this floor holds: 10 s of it, at least {@link MINIMUM_CAPACITY}. @internal */
export function capacityFor(minimumPerSecond: number): number {
  return Math.max(MINIMUM_CAPACITY, CAPACITY_SECONDS * minimumPerSecond);
}

/**
 * Fills defaults and checks ranges (`fraction` in [0, 1]; `minimumPerSecond`
 * 0 or in [1/86400, 1e6] tokens per second). Only own properties of a plain object are read; `null`
 * is refused, never read as the default.
 * @throws PolicyConfigError naming `budget`, `budget.fraction`, `budget.minimumPerSecond` or an unknown key.
 */
export function validateBudgetOptions(options: RetryBudgetOptions): Required<RetryBudgetOptions> {
  checkOptions(options, BUCKET_RULES, 'budget', 'option');
  return {
    fraction: given(options.fraction, 0.1),
    minimumPerSecond: given(options.minimumPerSecond, 3),
  };
}
