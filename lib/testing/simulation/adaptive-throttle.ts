import { PolicyConfigError, RateLimitedError } from '../../core/index.js';
import { checkValue, given, MULTIPLIER_RULE } from '../../core/internal.js';

/** Options of {@link AdaptiveThrottle.sre}. */
export interface AdaptiveThrottleOptions {
  /**
   * The multiplier K: the throttle refuses nothing while the dependency accepts at least 1/K of the
   * requests sent; a finite number >= 1. Default 2 (the SRE book's recommendation).
   */
  readonly k?: number;
  /** How far back requests and accepts are counted, ms, a whole number of seconds >= 1000. Default 120 000 (two minutes). */
  readonly window?: number;
}

/**
 * The client-side adaptive throttle of Google's SRE book (chapter "Handling Overload"), as a reference
 * to measure the breaker against in the scenario matrix (DESIGN §3.6, §8.1). Each client counts, over
 * the last two minutes, `requests` (attempts the application made, refused ones included) and
 * `accepts` (attempts the dependency answered successfully), and refuses a new attempt locally with
 * probability `max(0, (requests − K·accepts) / (requests + 1))`.
 *
 * In the simulator a refused attempt never reaches the dependency and fails with a
 * `RateLimitedError` (verdict Limited: never retried, never budget or breaker evidence). It is a
 * model for comparison, not a policy option.
 */
export class AdaptiveThrottle {
  private constructor(
    /** The multiplier K. */
    readonly k: number,
    /** The counting window, ms. */
    readonly window: number,
  ) {}

  /**
   * The SRE book's throttle: K = 2 over two minutes unless told otherwise.
   * @throws PolicyConfigError naming `k` or `window` for a bad value.
   */
  static sre(options: AdaptiveThrottleOptions = {}): AdaptiveThrottle {
    const k = checkValue(MULTIPLIER_RULE, 'k', given(options.k, 2));
    const window = options.window ?? 120_000;
    if (
      typeof window !== 'number' ||
      !Number.isInteger(window) ||
      window < 1000 ||
      window % 1000 !== 0
    ) {
      throw new PolicyConfigError(
        'window',
        window,
        'must be a whole number of seconds in ms, >= 1000',
      );
    }
    return new AdaptiveThrottle(k, window);
  }

  /** `adaptive throttle K=2 over 120s`. */
  toString(): string {
    return `adaptive throttle K=${this.k} over ${this.window / 1000}s`;
  }

  /** A live throttle for one run, counting in one-second buckets. @internal used by the simulator. */
  start(random: () => number): LiveThrottle {
    return new LiveThrottle(this.k, this.window / 1000, random);
  }
}

/** The error of an attempt the adaptive throttle refused locally (Limited). */
export const THROTTLE_REFUSAL = new RateLimitedError(
  'refused locally by the adaptive throttle (reference model)',
);

/**
 * A running {@link AdaptiveThrottle}: per-second request and accept counts in rings covering the window.
 * @internal the simulator's.
 */
export class LiveThrottle {
  /** Attempts refused locally so far. */
  refused = 0;
  private readonly requests: Float64Array;
  private readonly accepts: Float64Array;
  private requestSum = 0;
  private acceptSum = 0;
  private second = 0;

  constructor(
    private readonly k: number,
    seconds: number,
    private readonly random: () => number,
  ) {
    this.requests = new Float64Array(seconds);
    this.accepts = new Float64Array(seconds);
  }

  /** Counts one attempt at `now` (ms) and decides it: true = send it, false = refuse it locally. */
  admit(now: number): boolean {
    this.advance(now);
    const p = (this.requestSum - this.k * this.acceptSum) / (this.requestSum + 1);
    this.add(this.requests, 1);
    this.requestSum++;
    if (p > 0 && this.random() < p) {
      this.refused++;
      return false;
    }
    return true;
  }

  /** Counts an attempt the dependency answered successfully at `now` (ms). */
  accept(now: number): void {
    this.advance(now);
    this.add(this.accepts, 1);
    this.acceptSum++;
  }

  private add(ring: Float64Array, amount: number): void {
    ring[this.second % ring.length]! += amount;
  }

  /** Drops the buckets of seconds that left the window. */
  private advance(now: number): void {
    const second = Math.floor(now / 1000);
    const size = this.requests.length;
    if (second <= this.second) return;
    const steps = Math.min(second - this.second, size);
    for (let i = 1; i <= steps; i++) {
      const slot = (this.second + i) % size;
      this.requestSum -= this.requests[slot]!;
      this.acceptSum -= this.accepts[slot]!;
      this.requests[slot] = 0;
      this.accepts[slot] = 0;
    }
    this.second = second;
  }
}
