import type { Clock, TimerHandle } from '../../core/index.js';

/** The defaults of `DefaultRateLimiter` in `@smithy/util-retry` (the AWS SDKs' adaptive retry mode). */
export const AWS_RATE_LIMITER = Object.freeze({
  /** Share of the measured send rate kept when a throttling answer arrives. */
  beta: 0.7,
  /** Least bucket capacity, tokens. */
  minCapacity: 1,
  /** Least fill rate, tokens (sends) per second. */
  minFillRate: 0.5,
  /** Scale constant C of the cubic recovery curve. */
  scaleConstant: 0.4,
  /** Weight of the newest half-second in the smoothed send rate. */
  smooth: 0.8,
});

/** An attempt waiting for a send token. */
interface Waiter {
  readonly resolve: () => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** Rounds as the SDK does after each rate computation (`parseFloat(x.toFixed(8))`). */
const precise = (x: number): number => parseFloat(x.toFixed(8));

/**
 * The AWS SDKs' adaptive-mode client send-rate limiter, after `DefaultRateLimiter`: off until the
 * first throttling answer; from then on every attempt takes a token from a bucket refilled at
 * `fillRate` sends per second (capacity = that rate, at least 1), waiting for one when it is empty.
 * Each answer updates the rate CUBIC-style: a throttling answer cuts it to `beta` × the measured send
 * rate (smoothed over half-second buckets); any other answer grows it along
 * `C · (t − lastThrottle − W)³ + lastMaxRate`, `W = ∛(lastMaxRate · (1 − beta) / C)`, capped at twice
 * the measured rate. Times are seconds on the simulator's clock.
 * @internal the simulator's reference model (`AwsRetry.adaptive`).
 */
export class CubicRateLimiter {
  /** Whether a throttling answer has turned the limiter on. */
  enabled = false;
  /** Tokens in the bucket. */
  availableTokens = 0;
  /** Tokens (sends) per second the bucket refills. */
  fillRate: number = AWS_RATE_LIMITER.minFillRate;
  /** Most tokens the bucket holds. */
  maxCapacity: number = AWS_RATE_LIMITER.minCapacity;
  /** Smoothed rate of answers, per second. */
  measuredTxRate = 0;
  /** The rate in force at the last throttling answer, per second. */
  lastMaxRate = 0;
  private requestCount = 0;
  private lastThrottleTime: number;
  private lastTxRateBucket: number;
  private lastTimestamp: number | undefined = undefined;
  private timeWindow = 0;
  private readonly waiters: Waiter[] = [];
  private timer: TimerHandle | undefined = undefined;

  constructor(private readonly clock: Clock) {
    const now = this.seconds();
    this.lastThrottleTime = now;
    this.lastTxRateBucket = Math.floor(now);
  }

  /**
   * Takes a send token: at once (`undefined`) while the limiter is off, or the bucket holds one and
   * nobody waits; else a promise that resolves once the bucket refilled one (the SDK's wait). Waiters
   * are served in arrival order, one timer for the first of them: the SDK lets every waiter sleep
   * and race for each token, which sends at the same rate (a whole token per `1 / fillRate` s) at a
   * cost that grows with the square of the queue. An abort of `signal` while waiting rejects with
   * its reason and takes nothing.
   */
  acquire(signal?: AbortSignal): Promise<void> | undefined {
    if (!this.enabled) return undefined;
    this.refill();
    if (this.waiters.length === 0 && this.availableTokens >= 1) {
      this.availableTokens -= 1;
      return undefined;
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, signal, onAbort: undefined };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          if (this.waiters.length === 0 && this.timer !== undefined) {
            this.clock.clearTimer(this.timer);
            this.timer = undefined;
          }
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      if (this.timer === undefined) this.wait();
    });
  }

  /** Sleeps until the bucket holds a whole token, then serves waiters while it does. */
  private wait(): void {
    // Whole ms, at least 1, as a Node timer waits: an exact fractional delay can leave the bucket a
    // rounding error short of a token and retry at a delay too small to move the clock.
    const delay = Math.max(1, Math.ceil(((1 - this.availableTokens) / this.fillRate) * 1000));
    this.timer = this.clock.setTimer(delay, () => {
      this.timer = undefined;
      this.refill();
      while (this.waiters.length > 0 && this.availableTokens >= 1) {
        this.availableTokens -= 1;
        const waiter = this.waiters.shift()!;
        if (waiter.onAbort !== undefined)
          waiter.signal!.removeEventListener('abort', waiter.onAbort);
        waiter.resolve();
      }
      if (this.waiters.length > 0) this.wait();
    });
  }

  /** Records one answer: `throttled` when the dependency refused for load (429, 503 Slow Down). */
  update(throttled: boolean): void {
    const { beta, minFillRate, minCapacity } = AWS_RATE_LIMITER;
    this.updateMeasuredRate();
    let rate: number;
    if (throttled) {
      const rateToUse = this.enabled
        ? Math.min(this.measuredTxRate, this.fillRate)
        : this.measuredTxRate;
      this.lastMaxRate = rateToUse;
      this.calculateTimeWindow();
      this.lastThrottleTime = this.seconds();
      rate = precise(rateToUse * beta);
      this.enabled = true;
    } else {
      this.calculateTimeWindow();
      rate = precise(
        AWS_RATE_LIMITER.scaleConstant *
          (this.seconds() - this.lastThrottleTime - this.timeWindow) ** 3 +
          this.lastMaxRate,
      );
    }
    const newRate = Math.min(rate, 2 * this.measuredTxRate);
    this.refill();
    this.fillRate = Math.max(newRate, minFillRate);
    this.maxCapacity = Math.max(newRate, minCapacity);
    this.availableTokens = Math.min(this.availableTokens, this.maxCapacity);
  }

  private seconds(): number {
    return this.clock.now() / 1000;
  }

  private refill(): void {
    const now = this.seconds();
    if (this.lastTimestamp === undefined) {
      this.lastTimestamp = now;
      return;
    }
    this.availableTokens = Math.min(
      this.maxCapacity,
      this.availableTokens + (now - this.lastTimestamp) * this.fillRate,
    );
    this.lastTimestamp = now;
  }

  private calculateTimeWindow(): void {
    const { beta, scaleConstant } = AWS_RATE_LIMITER;
    this.timeWindow = precise(((this.lastMaxRate * (1 - beta)) / scaleConstant) ** (1 / 3));
  }

  /** Answers counted in half-second buckets; a finished bucket enters the smoothed rate. */
  private updateMeasuredRate(): void {
    const bucket = Math.floor(this.seconds() * 2) / 2;
    this.requestCount++;
    if (bucket > this.lastTxRateBucket) {
      const current = this.requestCount / (bucket - this.lastTxRateBucket);
      this.measuredTxRate = precise(
        current * AWS_RATE_LIMITER.smooth + this.measuredTxRate * (1 - AWS_RATE_LIMITER.smooth),
      );
      this.requestCount = 0;
      this.lastTxRateBucket = bucket;
    }
  }
}
