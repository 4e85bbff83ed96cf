import { RecentLatency } from './recent-latency.js';

/** Window the measured terms read the dependency's successful latency over, ms (DESIGN §3.7, §3.8). */
export const MEASURED_WINDOW_MS = 300_000;
/** Successes the window must hold before a measured term is warm (DESIGN §3.7): `Backoff.measured`'s median. */
export const MEASURED_WARM_SAMPLES = 20;
/**
 * Successes the window must hold before the attempt ceiling is warm. Not DESIGN's 20: a p95 read
 * from 20 samples is their second largest, often half the true p95, and in the scenario matrix a
 * ceiling armed at 20 cut attempts a dependency answered within its own 150 ms timeout (3 × a p95
 * read as 40 ms) and, at 70 % failures, tipped the breaker into more opens (−1.3 and −1.7 points of
 * availability on two seeds of five). From 100 samples, five lie above the p95 and nothing was cut.
 */
export const CEILING_WARM_SAMPLES = 100;
/** A warm ceiling is worked out again at most this often, ms: the 5-minute window moves slowly. */
const CEILING_REFRESH_MS = 1_000;
/** Weight of one attempt in the share of recent attempts that outlasted the ceiling (~100 attempts). */
const OUTLASTED_WEIGHT = 0.01;
/**
 * Above this share of recent attempts outlasting the ceiling, the ceiling stands aside: the
 * dependency's latency has moved (a brownout, a slower release) and the 5-minute window has not
 * caught up, so cutting would fail calls the dependency still answers. A steady dependency outlasts
 * 3 × its p95 in well under 1 % of attempts (a log-normal of p50 20 ms / p99 200 ms: 0.3 %).
 */
export const CEILING_STANDS_ASIDE_AT = 0.15;
/** The ceiling is back once the share falls below this (hysteresis: no flapping at the edge). */
export const CEILING_RESUMES_AT = 0.05;

/**
 * What a policy instance measured of its dependency for the measured terms (the attempt ceiling and
 * `Backoff.measured`): the durations of successful attempts over 5 minutes (a {@link RecentLatency}:
 * O(1) and allocation-free per sample, quantiles within 4.4 %), and for the ceiling the share of
 * recent attempts that outlasted it. Fed by the executor after each attempt; learns nothing while
 * the policy's saturation guard says the event loop is saturated. The config layer pins one to a
 * policy name, so a reload keeps what it measured.
 */
export class MeasuredLatency {
  /** Successful attempt durations, 5-minute window. */
  readonly latency = new RecentLatency(MEASURED_WINDOW_MS);
  private ceilingValue: number | undefined = undefined;
  private ceilingAt = Number.NEGATIVE_INFINITY;
  private ceilingKey = Number.NaN;
  private outlasted = 0;
  private standingAside = false;

  /** Successes in the window now. */
  samples(now: number): number {
    return this.latency.count(now);
  }

  /**
   * The `q`-quantile of successful durations over the last 5 minutes, ms; `undefined` while the
   * window holds fewer than `warm` successes (cold).
   * @param now clock reading, ms
   * @param q in (0, 1)
   * @param warm successes needed, default 20
   */
  quantile(now: number, q: number, warm = MEASURED_WARM_SAMPLES): number | undefined {
    const latency = this.latency;
    if (latency.count(now) < warm) return undefined;
    return latency.quantile(now, q);
  }

  /**
   * The ceiling `multiple` × the `quantile` of successful durations, ms, once 100 successes are in
   * the window (else `undefined`), worked out at most once a second; whether it is in force is
   * {@link standsAside}.
   */
  ceiling(now: number, multiple: number, quantile: number): number | undefined {
    const key = multiple * 1000 + quantile;
    if (
      key === this.ceilingKey &&
      now - this.ceilingAt < CEILING_REFRESH_MS &&
      now >= this.ceilingAt
    )
      return this.ceilingValue;
    const q = this.quantile(now, quantile, CEILING_WARM_SAMPLES);
    this.ceilingValue = q === undefined ? undefined : multiple * q;
    this.ceilingKey = key;
    this.ceilingAt = q === undefined ? Number.NEGATIVE_INFINITY : now;
    return this.ceilingValue;
  }

  /** Whether the ceiling stands aside because too many recent attempts outlasted it (see {@link CEILING_STANDS_ASIDE_AT}). */
  get standsAside(): boolean {
    return this.standingAside;
  }

  /** The share of recent attempts that outlasted the ceiling (a moving average over ~100 attempts). */
  get outlastedShare(): number {
    return this.outlasted;
  }

  /**
   * One attempt ended.
   * @param now clock reading at its end, ms
   * @param duration how long it ran, ms
   * @param ok whether it succeeded (only successes are latency samples)
   * @param learn false while the event loop is saturated: the duration is the loop's, nothing is learnt
   * @param ceiling the ceiling measured when it ran (`undefined`: none warm), in force or standing aside
   */
  record(
    now: number,
    duration: number,
    ok: boolean,
    learn: boolean,
    ceiling: number | undefined,
  ): void {
    if (!learn) return;
    if (ok) this.latency.add(now, duration);
    if (ceiling === undefined) return;
    // An attempt the ceiling cut ran for the ceiling itself, give or take the float of the clock's sums.
    const outlasted = duration >= ceiling * (1 - 1e-9) ? 1 : 0;
    const share = this.outlasted + OUTLASTED_WEIGHT * (outlasted - this.outlasted);
    this.outlasted = share;
    if (share > CEILING_STANDS_ASIDE_AT) this.standingAside = true;
    else if (share < CEILING_RESUMES_AT) this.standingAside = false;
  }
}
