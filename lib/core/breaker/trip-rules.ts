import { LatencyBaseline } from '../estimators/latency-baseline.js';
import type { ResolvedBreakerSettings } from './breaker-settings.js';
import type { BreakerSnapshot } from './breaker-state.js';
import { OutcomeWindow } from './outcome-window.js';
import { RecentOutcomes, evidentRun } from './recent-outcomes.js';

/** The trip rules' part of a {@link BreakerSnapshot}. */
export type TripReadings = Pick<
  BreakerSnapshot,
  | 'consecutiveFailures'
  | 'errorBaselineWarm'
  | 'errorBaselineCalls'
  | 'errorBaselineRate'
  | 'tripWindowCalls'
  | 'tripWindowFailures'
  | 'tripWindowSlow'
  | 'latencyBaselineWarm'
  | 'latencyMedian'
>;

/**
 * The evidence a circuit breaker trips on, and the rules that read it (DESIGN §3.6): the run of
 * consecutive Transient attempts against the recent error rate, the trip window against the error
 * baseline, and slow attempts against the latency baseline. It decides *whether* to open; the state
 * machine decides what opening means. Both baselines and the recent outcomes outlive every state
 * change; {@link clearTrip} forgets the trip window and the run, {@link reset} the recent outcomes too.
 *
 * - Failure-rate floor: no failure trip while fewer than `failureRateFloor` (½) of the recent
 *   outcomes (the last `recentOutcomes`, 100, within the trip window) failed — a dependency that
 *   still answers half its requests is not cut off.
 * - Improbable run: a run of Transient attempts trips once it reaches {@link evidentRun} for the
 *   error rate the recent outcomes showed before the run began (capped at the floor): 5 for a
 *   healthy dependency or a cold start, about 20 for one failing 40 %, 27 at 50 % — a run that long
 *   would happen by chance less than once in `streakSignificance` (10⁻⁸) runs (Ok breaks the run).
 *   An explicit `consecutiveFailures` resolves `streakSignificance` to 1 and the floor to 0: its run
 *   trips as written (see `resolveBreakerSettings`).
 * - Relative error rate (off by default, `errorRateMultiple` 0), armed once the error baseline holds
 *   `errorBaselineSamples` outcomes: the trip window's rate reaches `errorRateMultiple` × the
 *   baseline rate and `minimumErrorRate` absolute, with ≥ `minimumFailures` failures and
 *   ≥ `minimumThroughput` attempts in the window; the floor applies too.
 * - Slow calls (off by default, `slowCallMultiple` 0), once the latency baseline is warm:
 *   ≥ `slowCallRatio` of the trip window's attempts (≥ `minimumThroughput`) took more than
 *   `slowCallMultiple` × the baseline median.
 */
export class TripRules {
  private window: OutcomeWindow;
  private latency: LatencyBaseline;
  private recent: RecentOutcomes;
  private failureRun = 0;
  /** Clock reading (ms) of the current run's first failure. */
  private runStart = 0;
  /** The rule that last asked the breaker to open. */
  private tripped: 'run' | 'rate' | 'slow' = 'run';

  /** @param now the clock reading (ms) the windows start from */
  constructor(
    private settings: ResolvedBreakerSettings,
    now: number,
  ) {
    this.window = new OutcomeWindow(settings.tripWindow, settings.baselineWindow, now);
    this.latency = new LatencyBaseline(
      settings.tripWindow,
      settings.baselineWindow,
      settings.latencyBaselineSamples,
    );
    this.recent = new RecentOutcomes(settings.recentOutcomes, settings.tripWindow);
  }

  /** Adopts new thresholds; changing `tripWindow` or `baselineWindow` starts both windows afresh. */
  reconfigure(next: ResolvedBreakerSettings, now: number): void {
    if (
      next.tripWindow !== this.settings.tripWindow ||
      next.baselineWindow !== this.settings.baselineWindow
    ) {
      this.window = new OutcomeWindow(next.tripWindow, next.baselineWindow, now);
      this.latency = new LatencyBaseline(
        next.tripWindow,
        next.baselineWindow,
        next.latencyBaselineSamples,
      );
    } else {
      this.latency.minimumSamples = next.latencyBaselineSamples;
    }
    if (
      next.recentOutcomes !== this.settings.recentOutcomes ||
      next.tripWindow !== this.settings.tripWindow
    ) {
      this.recent = new RecentOutcomes(next.recentOutcomes, next.tripWindow);
    }
    this.settings = next;
  }

  /** Whether an attempt of `durationMs` ending at `now` was slow; never while the latency baseline is cold. */
  isSlow(now: number, durationMs: number): boolean {
    return durationMs > this.slowThreshold(now);
  }

  /** Feeds a successful attempt's duration to the latency baseline (only successes describe normal latency). */
  addSuccess(now: number, durationMs: number): void {
    this.latency.add(now, durationMs);
  }

  /** Records an outcome (Ok or Transient) in the windows without evaluating any rule. */
  sample(now: number, failure: boolean, slow: boolean): void {
    this.window.record(now, failure, slow);
    this.recent.record(now, failure);
  }

  /**
   * Records an outcome of the closed state and evaluates the rules.
   * @returns whether the breaker must open now
   */
  recordClosed(now: number, failure: boolean, slow: boolean): boolean {
    this.window.record(now, failure, slow);
    this.recent.record(now, failure);
    if (failure) {
      if (this.failureRun++ === 0) this.runStart = now;
      if (this.shouldTripOnFailure()) return true;
    } else {
      this.failureRun = 0;
    }
    if (!slow || !this.shouldTripOnSlow()) return false;
    this.tripped = 'slow';
    return true;
  }

  /**
   * What the last trip {@link recordClosed} reported was on (read before {@link clearTrip}):
   * the run's failures and the time since its first, or the trip window's failures or slow attempts
   * and the window's length.
   */
  evidence(now: number): { cause: 'failures' | 'slow'; count: number; spanMs: number } {
    switch (this.tripped) {
      case 'run':
        return { cause: 'failures', count: this.failureRun, spanMs: now - this.runStart };
      case 'rate':
        return {
          cause: 'failures',
          count: this.window.tripFailures,
          spanMs: this.settings.tripWindow,
        };
      default:
        return { cause: 'slow', count: this.window.tripSlow, spanMs: this.settings.tripWindow };
    }
  }

  /**
   * Forgets the trip window and the failure run (on opening their evidence was acted on; on reset it is
   * dropped). The recent outcomes stay: they describe the dependency, which opening does not change.
   */
  clearTrip(now: number): void {
    this.window.clearTripWindow(now);
    this.failureRun = 0;
  }

  /**
   * Forgets the trip window, the run and the recent outcomes (a manual reset: the operator says the
   * dependency is fine now, so its recent error rate must not lengthen the next run or hold the floor
   * against it). Both baselines stay.
   */
  reset(now: number): void {
    this.clearTrip(now);
    this.recent.clear();
  }

  /** Ends the current run of Transient attempts (the breaker closed). */
  clearRun(): void {
    this.failureRun = 0;
  }

  /** The readings health checks show (allocates). */
  readings(now: number): TripReadings {
    this.window.advance(now);
    const baseCalls = this.window.baselineCalls;
    return {
      consecutiveFailures: this.failureRun,
      errorBaselineWarm: baseCalls >= this.settings.errorBaselineSamples,
      errorBaselineCalls: baseCalls,
      errorBaselineRate: baseCalls > 0 ? this.window.baselineFailures / baseCalls : undefined,
      tripWindowCalls: this.window.tripCalls,
      tripWindowFailures: this.window.tripFailures,
      tripWindowSlow: this.window.tripSlow,
      latencyBaselineWarm: this.latency.isWarm(now),
      latencyMedian: this.latency.median(now),
    };
  }

  private shouldTripOnFailure(): boolean {
    const s = this.settings;
    const recent = this.recent;
    // The floor: a dependency still answering at least that share of recent attempts stays reachable.
    if (recent.failures < s.failureRateFloor * recent.count) return false;
    if (
      s.consecutiveFailures > 0 &&
      this.failureRun >= s.consecutiveFailures &&
      this.failureRun >= this.evidentRun()
    ) {
      this.tripped = 'run';
      return true;
    }
    if (s.errorRateMultiple === 0) return false;
    const w = this.window;
    const baseCalls = w.baselineCalls;
    if (baseCalls < s.errorBaselineSamples) return false;
    const failures = w.tripFailures;
    const calls = w.tripCalls;
    if (failures < s.minimumFailures || calls < s.minimumThroughput) return false;
    if (failures / calls < s.minimumErrorRate) return false;
    // Cross-multiplied so integer counts compare exactly ("reaches 5 ×" must hold at exactly 5 ×).
    if (failures * baseCalls < s.errorRateMultiple * w.baselineFailures * calls) return false;
    this.tripped = 'rate';
    return true;
  }

  /**
   * The run that is evidence now: {@link evidentRun} for the error rate of the recent outcomes before
   * the current run (none before it, as at a cold start: the rate is taken as 0), capped at the floor
   * so that a dependency failing more than the floor can still trip.
   */
  private evidentRun(): number {
    const s = this.settings;
    const recent = this.recent;
    const run = this.failureRun < recent.count ? this.failureRun : recent.count;
    const before = recent.count - run;
    const rate = before === 0 ? 0 : (recent.failures - run) / before;
    return evidentRun(
      rate < s.failureRateFloor ? rate : s.failureRateFloor,
      s.consecutiveFailures,
      s.streakSignificance,
    );
  }

  private shouldTripOnSlow(): boolean {
    const calls = this.window.tripCalls;
    return (
      calls >= this.settings.minimumThroughput &&
      this.window.tripSlow / calls >= this.settings.slowCallRatio
    );
  }

  /** Durations above this (ms) are slow; +Infinity while the latency baseline is cold or the rule is off. */
  private slowThreshold(now: number): number {
    const multiple = this.settings.slowCallMultiple;
    if (multiple === 0) return Infinity;
    const median = this.latency.median(now);
    return median === undefined ? Infinity : multiple * median;
  }
}
