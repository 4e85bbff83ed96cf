import type { Verdict } from '../classification/verdict.js';
import type { Clock } from '../time/clock.js';
import { BUCKET_RULES } from '../rules/option-rules.js';
import { NAME_RULE, checkOptions, checkValue, given } from '../rules/value-rule.js';
import type { RetryBudgetState } from './retry-budget-state.js';
import { SlidingWindowBudget, type SlidingWindowBudgetOptions, validateSlidingWindowOptions } from './sliding-window-budget.js';

export type { RetryBudgetState } from './retry-budget-state.js';


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
  private fraction: number;
  private perMs: number;
  private cap: number;
  private tokens: number;
  private refilledAt: number;

  /**
   * @param options `fraction` (tokens per success, default 0.1) and `minimumPerSecond` (floor, default 3)
   * @param clock the clock the floor accrues on
   * @throws PolicyConfigError when `fraction` is outside [0, 1] or `minimumPerSecond` is negative.
   */
  constructor(
    options: RetryBudgetOptions,
    private readonly clock: Clock,
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
  recordAttempt(_attempt: number, verdict: Verdict): void {
    if (verdict.kind === 'Ok') this.deposit();
  }

  /** A successful attempt deposits `fraction` tokens (never beyond capacity). */
  deposit(): void {
    const tokens = this.tokens + this.fraction;
    this.tokens = tokens > this.cap ? this.cap : tokens;
  }

  /**
   * {@link deposit} as a promise continuation: deposits, then returns the value it is given. One per
   * bucket, so a success path that ends in `.then(bucket.passDeposit)` builds no closure per call.
   * @internal the executor's
   */
  readonly passDeposit = <T>(value: T): T => {
    this.deposit();
    return value;
  };

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

  private refill(now: number): void {
    const elapsed = now - this.refilledAt;
    // Zero or negative elapsed time accrues nothing; the reading still moves forward only.
    if (elapsed <= 0) return;
    this.refilledAt = now;
    if (this.tokens >= this.cap) return;
    const tokens = this.tokens + elapsed * this.perMs;
    this.tokens = tokens > this.cap ? this.cap : tokens;
  }
}

/** Process-wide shared budgets: the options of the first declaration of a name, and its bucket once used. */
const sharedBudgets = new Map<string, { options: Readonly<RetryBudgetOptions>; bucket?: TokenBucket }>();

/**
 * How a policy funds its retries (DESIGN §3.5). A value, resolved to a bucket when a call needs one:
 * - `RetryBudget.automatic` (the default): a bucket private to each policy instance (and scope key);
 * - `RetryBudget.of(options)`: one bucket private to this budget value, whichever policies hold it;
 * - `RetryBudget.shared(name, options)`: one process-wide bucket per name; the first declaration's options
 *   win, and the bucket reads the clock of the first policy that uses it (so tests wanting their own
 *   FakeClock use `RetryBudget.of` or a name of their own);
 * - `RetryBudget.using(bucket)`: an existing bucket (the Nest registry pins one to each policy name);
 * - `RetryBudget.none`: no budget; retries are limited by `attempts` only.
 */
export class RetryBudget {
  /** Default budget: fraction 0.1, floor 3/s, a bucket per policy instance. */
  static readonly automatic = new RetryBudget('automatic', {});
  /** The one spelling of "no retry budget". */
  static readonly none = new RetryBudget('none', {});

  private bucket: RetryBudgetState | undefined;
  private readonly perOwner: WeakMap<object, RetryBudgetState> | undefined;

  private constructor(
    /** How the state is chosen. */
    readonly kind: 'automatic' | 'none' | 'of' | 'shared' | 'using' | 'slidingWindow',
    /** The parameters a new state gets (token-bucket options; sliding-window options for `slidingWindow`). */
    readonly options: Readonly<RetryBudgetOptions> | Readonly<Required<SlidingWindowBudgetOptions>>,
    /** The process-wide name for `shared` budgets. */
    readonly sharedName?: string,
    bucket?: RetryBudgetState,
  ) {
    this.bucket = bucket;
    this.perOwner = kind === 'automatic' || kind === 'slidingWindow' ? new WeakMap() : undefined;
  }

  /**
   * A bucket private to this value. @throws PolicyConfigError for a fraction outside [0, 1] or a negative floor.
   */
  static of(options: RetryBudgetOptions = {}): RetryBudget {
    validateBudgetOptions(options);
    return new RetryBudget('of', { ...options });
  }

  /**
   * A process-wide bucket shared by every policy naming it; the first caller's options win.
   * @throws PolicyConfigError for a name that is empty or reserved (`__proto__`, `constructor`, `prototype`), or invalid options.
   */
  static shared(name: string, options: RetryBudgetOptions = {}): RetryBudget {
    checkValue(NAME_RULE, 'budget.shared', name);
    validateBudgetOptions(options);
    let declared = sharedBudgets.get(name);
    if (declared === undefined) {
      declared = { options: Object.freeze({ ...options }) };
      sharedBudgets.set(name, declared);
    }
    return new RetryBudget('shared', declared.options, name);
  }

  /** A budget that spends from the given state (a token bucket or a sliding window). */
  static using(bucket: RetryBudgetState): RetryBudget {
    return new RetryBudget('using', {}, undefined, bucket);
  }

  /**
   * The sliding-window shape (DESIGN §3.5): retries in the last
   * `samplingDuration` ms at most `retryRatio` × the logical calls in it, always allowed while fewer
   * than `minimumThroughput` calls are in the window; calls are counted once each, never per
   * attempt. One window per policy instance (and per scope key), like `automatic`.
   * @param options `retryRatio` (default 0.1), `samplingDuration` (ms, default 30000), `minimumThroughput` (default 100)
   * @throws PolicyConfigError naming `budget.retryRatio`, `budget.samplingDuration` or `budget.minimumThroughput`.
   */
  static slidingWindow(options: SlidingWindowBudgetOptions = {}): RetryBudget {
    return new RetryBudget('slidingWindow', validateSlidingWindowOptions(options));
  }

  /**
   * Automatic budgets with non-default parameters (still one bucket per policy instance).
   * @throws PolicyConfigError for invalid options.
   */
  static automaticWith(options: RetryBudgetOptions): RetryBudget {
    validateBudgetOptions(options);
    return new RetryBudget('automatic', { ...options });
  }

  /**
   * The state for `owner` (a policy instance or scope key object), created on first use with `clock`;
   * `undefined` for `none`.
   */
  resolve(owner: object, clock: Clock): RetryBudgetState | undefined {
    switch (this.kind) {
      case 'none':
        return undefined;
      case 'automatic':
      case 'slidingWindow': {
        let bucket = this.perOwner!.get(owner);
        if (bucket === undefined) {
          bucket = this.kind === 'automatic' ? new TokenBucket(this.options as RetryBudgetOptions, clock) : new SlidingWindowBudget(this.options as SlidingWindowBudgetOptions, clock);
          this.perOwner!.set(owner, bucket);
        }
        return bucket;
      }
      case 'shared': {
        const declared = sharedBudgets.get(this.sharedName!)!;
        return (declared.bucket ??= new TokenBucket(declared.options, clock));
      }
      default:
        return (this.bucket ??= new TokenBucket(this.options as RetryBudgetOptions, clock));
    }
  }
}

function capacityFor(minimumPerSecond: number): number {
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
  return { fraction: given(options.fraction, 0.1), minimumPerSecond: given(options.minimumPerSecond, 3) };
}
