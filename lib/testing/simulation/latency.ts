import { PolicyConfigError } from '../../core/index.js';
import { BOUND_RULE, checkValue } from '../../core/internal.js';

/** The standard normal quantile of 0.99 (z such that P(Z <= z) = 0.99). */
export const Z_99 = 2.326_347_874;

/**
 * A log-normal latency distribution fitted to two quantiles: `mu = ln p50`,
 * `sigma = (ln p99 - ln p50) / 2.3263`. The median is exactly `p50` and the 99th percentile exactly
 * `p99`; `p99 === p50` gives a constant latency. Immutable: one value serves any number of runs.
 * @internal used by `Dependency`; exported for the simulator's own tests.
 */
export class LogNormalLatency {
  /** ln of the median. */
  readonly mu: number;
  /** Spread of ln(latency). */
  readonly sigma: number;

  /**
   * @param p50 median latency in ms, > 0
   * @param p99 99th-percentile latency in ms, >= p50
   * @throws PolicyConfigError naming `p50` / `p99` for values outside those rules.
   */
  constructor(
    readonly p50: number,
    readonly p99: number,
  ) {
    checkLatencyQuantiles(p50, p99);
    this.mu = Math.log(p50);
    this.sigma = (Math.log(p99) - this.mu) / Z_99;
  }

  /** One latency sample in ms, drawn with `random` (uniform [0, 1)). */
  sample(random: () => number): number {
    if (this.sigma === 0) return this.p50;
    return Math.exp(this.mu + this.sigma * this.normal(random));
  }

  /**
   * A standard normal draw (Box–Muller, cosine branch only: two uniform draws per sample, so the value
   * holds no state and one distribution can serve many runs).
   */
  private normal(random: () => number): number {
    const u = 1 - random(); // (0, 1]: ln never sees 0
    const v = random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}

/**
 * @throws PolicyConfigError unless `p50` is a finite number > 0 and `p99` a finite number >= `p50`.
 * @internal
 */
export function checkLatencyQuantiles(p50: unknown, p99: unknown): void {
  const median = checkValue(BOUND_RULE, 'p50', p50);
  if (typeof p99 !== 'number' || !Number.isFinite(p99) || p99 < median) {
    throw new PolicyConfigError('p99', p99, `must be a finite latency in ms >= p50 (${p50})`);
  }
}
