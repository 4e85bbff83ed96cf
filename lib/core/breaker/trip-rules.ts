import { LatencyBaseline } from '../estimators/latency-baseline.js';
import type { ResolvedBreakerSettings } from './breaker-settings.js';
import type { BreakerSnapshot } from './breaker-state.js';
import { OutcomeWindow } from './outcome-window.js';

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
 * consecutive Transient attempts, the trip window against the error baseline, and slow attempts
 * against the latency baseline. It decides *whether* to open; the state machine decides what opening
 * means. Both baselines outlive every state change; only {@link clearTrip} forgets the trip window.
 *
 * - `consecutiveFailures` Transient attempts in a row trip (Ok breaks the run);
 * - relative error rate, armed once the error baseline holds `errorBaselineSamples` outcomes: the
 *   trip window's rate reaches `errorRateMultiple` × the baseline rate and `minimumErrorRate`
 *   absolute, with ≥ `minimumFailures` failures and ≥ `minimumThroughput` attempts in the window;
 * - slow calls, once the latency baseline is warm: ≥ `slowCallRatio` of the trip window's attempts
 *   (≥ `minimumThroughput`) took more than `slowCallMultiple` × the baseline median.
 */
export class TripRules {
  private window: OutcomeWindow;
  private latency: LatencyBaseline;
  private failureRun = 0;

  /** @param now the clock reading (ms) the windows start from */
  constructor(
    private settings: ResolvedBreakerSettings,
    now: number,
  ) {
    this.window = new OutcomeWindow(settings.tripWindow, settings.baselineWindow, now);
    this.latency = new LatencyBaseline(settings.tripWindow, settings.baselineWindow, settings.latencyBaselineSamples);
  }

  /** Adopts new thresholds; changing `tripWindow` or `baselineWindow` starts both windows afresh. */
  reconfigure(next: ResolvedBreakerSettings, now: number): void {
    if (next.tripWindow !== this.settings.tripWindow || next.baselineWindow !== this.settings.baselineWindow) {
      this.window = new OutcomeWindow(next.tripWindow, next.baselineWindow, now);
      this.latency = new LatencyBaseline(next.tripWindow, next.baselineWindow, next.latencyBaselineSamples);
    } else {
      this.latency.minimumSamples = next.latencyBaselineSamples;
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
  }

  /**
   * Records an outcome of the closed state and evaluates the rules.
   * @returns whether the breaker must open now
   */
  recordClosed(now: number, failure: boolean, slow: boolean): boolean {
    this.window.record(now, failure, slow);
    if (failure) {
      this.failureRun++;
      if (this.shouldTripOnFailure()) return true;
    } else {
      this.failureRun = 0;
    }
    return slow && this.shouldTripOnSlow();
  }

  /** Forgets the trip window and the failure run (on opening their evidence was acted on; on reset it is dropped). */
  clearTrip(now: number): void {
    this.window.clearTripWindow(now);
    this.failureRun = 0;
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
    if (s.consecutiveFailures > 0 && this.failureRun >= s.consecutiveFailures) return true;
    if (s.errorRateMultiple === 0) return false;
    const w = this.window;
    const baseCalls = w.baselineCalls;
    if (baseCalls < s.errorBaselineSamples) return false;
    const failures = w.tripFailures;
    const calls = w.tripCalls;
    if (failures < s.minimumFailures || calls < s.minimumThroughput) return false;
    if (failures / calls < s.minimumErrorRate) return false;
    // Cross-multiplied so integer counts compare exactly ("reaches 5 ×" must hold at exactly 5 ×).
    return failures * baseCalls >= s.errorRateMultiple * w.baselineFailures * calls;
  }

  private shouldTripOnSlow(): boolean {
    const calls = this.window.tripCalls;
    return calls >= this.settings.minimumThroughput && this.window.tripSlow / calls >= this.settings.slowCallRatio;
  }

  /** Durations above this (ms) are slow; +Infinity while the latency baseline is cold or the rule is off. */
  private slowThreshold(now: number): number {
    const multiple = this.settings.slowCallMultiple;
    if (multiple === 0) return Infinity;
    const median = this.latency.median(now);
    return median === undefined ? Infinity : multiple * median;
  }
}
