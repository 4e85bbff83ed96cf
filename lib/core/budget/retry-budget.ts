import type { Clock } from '../time/clock.js';
import { NAME_RULE, checkValue } from '../rules/value-rule.js';
import { AdaptiveTokenBucket } from './adaptive-token-bucket.js';
import type { RetryBudgetState } from './retry-budget-state.js';
import { TokenBucket, type RetryBudgetOptions, validateBudgetOptions } from './token-bucket.js';
import {
  SlidingWindowBudget,
  type SlidingWindowBudgetOptions,
  validateSlidingWindowOptions,
} from './sliding-window-budget.js';

export type { RetryBudgetState } from './retry-budget-state.js';
export {
  MINIMUM_CAPACITY,
  TokenBucket,
  type RetryBudgetOptions,
  validateBudgetOptions,
} from './token-bucket.js';
export { AdaptiveTokenBucket } from './adaptive-token-bucket.js';
export { RetryEvidence, type RetryRegime } from './retry-evidence.js';

/** Process-wide shared budgets: the options of the first declaration of a name, and its bucket once used. */
const sharedBudgets = new Map<
  string,
  { options: Readonly<RetryBudgetOptions>; bucket?: TokenBucket }
>();

/**
 * How a policy funds its retries (DESIGN §3.5). A value, resolved to a bucket when a call needs one:
 * - `RetryBudget.automatic` (the default): an {@link AdaptiveTokenBucket} private to each policy
 *   instance (and scope key) — credit while retries work, the static bucket under strain, a call
 *   ticket as well while retries fail;
 * - `RetryBudget.tokenBucket(options)`: the static {@link TokenBucket}, private to each policy
 *   instance (and scope key), whatever retries are doing;
 * - `RetryBudget.of(options)`: one bucket private to this budget value, whichever policies hold it;
 * - `RetryBudget.shared(name, options)`: one process-wide bucket per name; the first declaration's options
 *   win, and the bucket reads the clock of the first policy that uses it (so tests wanting their own
 *   FakeClock use `RetryBudget.of` or a name of their own);
 * - `RetryBudget.using(bucket)`: an existing bucket (the Nest registry pins one to each policy name);
 * - `RetryBudget.none`: no budget; retries are limited by `attempts` only.
 */
export class RetryBudget {
  /**
   * Default budget: an adaptive bucket (fraction 0.1 and floor 3/s under strain, credit while
   * retries work, a call ticket while they fail) per policy instance.
   */
  static readonly automatic = new RetryBudget('automatic', {});
  /** The one spelling of "no retry budget". */
  static readonly none = new RetryBudget('none', {});

  private bucket: RetryBudgetState | undefined;
  private readonly perOwner: WeakMap<object, RetryBudgetState> | undefined;

  private constructor(
    /** How the state is chosen. */
    readonly kind:
      'automatic' | 'tokenBucket' | 'none' | 'of' | 'shared' | 'using' | 'slidingWindow',
    /** The parameters a new state gets (token-bucket options; sliding-window options for `slidingWindow`). */
    readonly options: Readonly<RetryBudgetOptions> | Readonly<Required<SlidingWindowBudgetOptions>>,
    /** The process-wide name for `shared` budgets. */
    readonly sharedName?: string,
    bucket?: RetryBudgetState,
  ) {
    this.bucket = bucket;
    this.perOwner =
      kind === 'automatic' || kind === 'tokenBucket' || kind === 'slidingWindow'
        ? new WeakMap()
        : undefined;
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
   * Automatic budgets with non-default parameters (still one adaptive bucket per policy instance):
   * `fraction` and `minimumPerSecond` are what the bucket keeps under strain and while retries fail.
   * @throws PolicyConfigError for invalid options.
   */
  static automaticWith(options: RetryBudgetOptions): RetryBudget {
    validateBudgetOptions(options);
    return new RetryBudget('automatic', { ...options });
  }

  /**
   * The static token bucket, one per policy instance (and per scope key): `fraction` tokens per
   * successful attempt, `minimumPerSecond` from the floor, 10 s of the floor held, a whole token per
   * retry whatever retries are doing (the default before the adaptive bucket; retries ≤ `fraction`
   * of successes plus the floor).
   * @param options `fraction` (default 0.1), `minimumPerSecond` (default 3)
   * @throws PolicyConfigError for a fraction outside [0, 1] or a bad floor.
   */
  static tokenBucket(options: RetryBudgetOptions = {}): RetryBudget {
    validateBudgetOptions(options);
    return new RetryBudget('tokenBucket', { ...options });
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
      case 'tokenBucket':
      case 'slidingWindow': {
        let bucket = this.perOwner!.get(owner);
        if (bucket === undefined) {
          bucket = this.newState(clock);
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

  private newState(clock: Clock): RetryBudgetState {
    if (this.kind === 'slidingWindow')
      return new SlidingWindowBudget(this.options as SlidingWindowBudgetOptions, clock);
    return this.kind === 'automatic'
      ? new AdaptiveTokenBucket(this.options as RetryBudgetOptions, clock)
      : new TokenBucket(this.options as RetryBudgetOptions, clock);
  }
}
