import type { Clock, TimerHandle } from './clock.js';
import { nominalBreak, servedBreak } from './break-duration.js';
import { validateBreakerSettings, type BreakerSettings, type ResolvedBreakerSettings } from './breaker-settings.js';
import { LatencyBaseline } from './latency-baseline.js';
import { OutcomeWindow } from './outcome-window.js';
import { RecoveryRamp } from './recovery-ramp.js';
import type { VerdictKind } from './verdict.js';

/**
 * What {@link CircuitBreaker.admit} decided for one attempt. Numeric so admission allocates nothing.
 * - `Refused` (0): do not start the attempt (report `DependencyUnavailable`).
 * - `Closed` (1): normal pass.
 * - `Probe` (2): the attempt holds a half-open probe slot.
 * - `Recovering` (3): admitted by the recovery ramp.
 */
export const Admission = Object.freeze({ Refused: 0, Closed: 1, Probe: 2, Recovering: 3 } as const);
/** One of the {@link Admission} values. */
export type Admission = (typeof Admission)[keyof typeof Admission];

/**
 * The breaker's state (DESIGN §3.6):
 * - `closed`: every attempt passes and is sampled;
 * - `open`: every attempt is refused until the served break ends;
 * - `halfOpen`: `halfOpenProbes` concurrent probes pass, the rest are refused;
 * - `recovering` (opt-in): a ramping fraction of attempts passes;
 * - `isolated`: held open by {@link CircuitBreaker.isolate} until every isolation is released.
 */
export type BreakerState = 'closed' | 'open' | 'halfOpen' | 'recovering' | 'isolated';

/**
 * Told about every state change after it happened. `breakMs` is the break being served (on a move to
 * `open`, the new one) or, on other moves, the last break served (0 if it never opened). A throwing
 * listener is swallowed: it cannot corrupt the breaker.
 */
export type BreakerTransitionListener = (from: BreakerState, to: BreakerState, breakMs: number) => void;

/** What a {@link CircuitBreaker} runs on. */
export interface BreakerDeps {
  /** The only source of time (monotonic ms) and of timers. */
  clock: Clock;
  /** Uniform numbers in [0, 1) for break jitter and recovery admission. */
  random: () => number;
  /** Called after each state change. */
  onTransition?: BreakerTransitionListener;
}

/** A plain-object reading of a breaker, for health checks and dashboards. Durations in ms. */
export interface BreakerSnapshot {
  /** State after any due transition. */
  readonly state: BreakerState;
  /** The break being served, or the last one served (0 if it never opened). */
  readonly breakMs: number;
  /** Ms of break left; 0 unless open or isolated inside a break. */
  readonly breakRemaining: number;
  /** Opens since the breaker last closed (drives the doubling). */
  readonly consecutiveOpens: number;
  /** The current run of Transient attempts while closed. */
  readonly consecutiveFailures: number;
  /** Half-open probe slots held. */
  readonly probesInFlight: number;
  /** Share of attempts admitted now, 0..1: 1 closed, 0 open or isolated, the ramp while recovering; half-open: 1 while a probe slot is free, else 0. */
  readonly admittedFraction: number;
  /** True once the error baseline holds `errorBaselineSamples` outcomes (the relative trip is armed). */
  readonly errorBaselineWarm: boolean;
  /** Outcomes (Ok + Transient) in the error baseline. */
  readonly errorBaselineCalls: number;
  /** The baseline error rate in [0, 1], `undefined` while the baseline is empty. */
  readonly errorBaselineRate: number | undefined;
  /** Attempts (Ok + Transient) in the trip window. */
  readonly tripWindowCalls: number;
  /** Transient attempts in the trip window. */
  readonly tripWindowFailures: number;
  /** Slow attempts in the trip window. */
  readonly tripWindowSlow: number;
  /** True once the latency baseline holds `latencyBaselineSamples` successes. */
  readonly latencyBaselineWarm: boolean;
  /** Median successful duration, ms, `undefined` while the latency baseline is cold. */
  readonly latencyMedian: number | undefined;
}

/**
 * A circuit breaker that measures instead of guessing (DESIGN §3.6). It samples attempts, not calls:
 * the executor calls {@link admit} before every attempt and {@link record} exactly once after every
 * admitted one.
 *
 * Trips (evaluated when an attempt adds evidence — a Transient or a slow attempt — while closed):
 * - `consecutiveFailures` (5) Transient attempts in a row (Ok breaks the run; Throttled, Permanent
 *   and Limited neither extend nor break it);
 * - relative error rate, armed once the error baseline (the 5 min before the trip window) holds
 *   `errorBaselineSamples` (100) outcomes: the trip window's (30 s) rate reaches `errorRateMultiple`
 *   (5) × the baseline rate and `minimumErrorRate` (5 %) absolute, with ≥ `minimumFailures` (2)
 *   failures and ≥ `minimumThroughput` (20) attempts in the window;
 * - slow calls, once the latency baseline is warm: ≥ `slowCallRatio` (½) of the trip window's
 *   attempts (≥ 20) took more than `slowCallMultiple` (3) × the baseline median.
 *
 * Evidence: only Transient is a failure; Ok and Transient are outcomes; Throttled and Permanent are
 * ignored; Limited records nothing. Only Ok durations feed the latency baseline. Both baselines
 * survive open, close, {@link reset} and isolation; opening forgets the trip window (its evidence was
 * acted on). An attempt admitted in one state that settles after the breaker moved on (e.g. admitted
 * closed, settling while open) only feeds the latency baseline.
 *
 * Breaks: `breakDuration` (15 s) doubled per consecutive open up to `maximumBreak` (2 min), jittered
 * (`equal` by default: at least half is served). The doubling counter resets when the breaker closes.
 * Open → HalfOpen happens when the break has passed and the breaker is next asked or read (no timer).
 *
 * HalfOpen: `halfOpenProbes` (1) concurrent probes; `closeAfter` (2) consecutive successful probes
 * close it (or start Recovering when `recovery` is on); a Transient probe — or a successful one slower
 * than the latency threshold, since the baseline remembers pre-brownout latency — re-opens at once
 * with the grown break. Throttled, Permanent and Limited probes return the slot and leave the streak
 * as it was. A probe that has not settled after `probeTimeout` ms frees its slot and resets the streak;
 * its late record then decides nothing (see {@link record}).
 *
 * Recovering (opt-in): admits `min(clock ramp, AIMD)` of attempts by `random()`, starting at 5 %; a
 * Transient re-opens with the grown break; the ramp reaching 100 % closes.
 *
 * Time comes only from the clock; nothing reads the wall clock.
 */
export class CircuitBreaker {
  private config: ResolvedBreakerSettings;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly onTransition: BreakerTransitionListener | undefined;
  private window: OutcomeWindow;
  private latency: LatencyBaseline;
  private ramp: RecoveryRamp | undefined;
  private current: BreakerState = 'closed';
  private failureRun = 0;
  private opens = 0;
  private served = 0;
  private openUntil = -Infinity;
  private probes = 0;
  private probeStreak = 0;
  // Held probes in admission order: when each was admitted (ms) and its release timer.
  private readonly probeAdmittedAt: number[] = [];
  private readonly probeTimers: TimerHandle[] = [];
  // Probes freed (by timeout or a state change) whose records may still arrive.
  private orphans = 0;
  private isolations = 0;
  private isolationEpoch = 0;

  /**
   * @param settings breaker settings; missing fields take the defaults of {@link BreakerSettings}
   * @param deps the clock, random source and optional transition listener
   * @throws PolicyConfigError (field `breaker.*`) for invalid settings
   */
  constructor(settings: BreakerSettings | ResolvedBreakerSettings, deps: BreakerDeps) {
    this.config = resolve(settings);
    this.clock = deps.clock;
    this.random = deps.random;
    this.onTransition = deps.onTransition;
    const now = this.clock.now();
    this.window = new OutcomeWindow(this.config.tripWindow, this.config.baselineWindow, now);
    this.latency = new LatencyBaseline(this.config.tripWindow, this.config.baselineWindow, this.config.latencyBaselineSamples);
    this.ramp = this.config.recovery && new RecoveryRamp(this.config.recovery);
  }

  /** The settings in force, every default filled in. */
  get settings(): ResolvedBreakerSettings {
    return this.config;
  }

  /** The state now (a break that has ended reads as `halfOpen`; a completed ramp as `closed`). */
  get state(): BreakerState {
    if (this.current !== 'closed') this.refresh(this.clock.now());
    return this.current;
  }

  /**
   * Decides whether the next attempt may start. Call before every attempt, including the first.
   * Allocation-free, and without a clock read, while closed.
   * @returns an {@link Admission}; anything but `Refused` must be followed by exactly one {@link record}.
   */
  admit(): Admission {
    if (this.current === 'closed') return Admission.Closed;
    return this.admitNotClosed(this.clock.now());
  }

  /**
   * Records the outcome of an admitted attempt. Call exactly once per admission that was not
   * `Refused`, whatever the outcome (the executor maps a caller abort to `Permanent` and an attempt
   * timeout to `Transient`). A `Probe` record always returns its slot. While a probe freed early (by
   * `probeTimeout` or a state change) may still report, an admission carrying no identity, a probe
   * record is matched by when its attempt started (`now - durationMs`): one that started more than
   * 1 ms before every probe now held is that late report; it frees nothing and decides nothing, and
   * only its success duration is kept for the latency baseline.
   * @param admission what {@link admit} returned for this attempt (`Refused` is ignored)
   * @param verdict the attempt's verdict
   * @param durationMs the attempt's duration, ms, measured on the same clock from (at or after) admission
   * @param at the clock reading when the attempt ended, if the caller has it (saves a clock read)
   */
  record(admission: Admission, verdict: VerdictKind, durationMs: number, at?: number): void {
    if (admission === Admission.Refused) return;
    if (admission === Admission.Probe) {
      this.settleProbe(verdict, durationMs);
      return;
    }
    if (verdict !== 'Ok' && verdict !== 'Transient') return;
    const now = at ?? this.clock.now();
    const failure = verdict === 'Transient';
    const slow = durationMs > this.slowThreshold(now);
    if (!failure) this.latency.add(now, durationMs);
    if (this.current === 'closed') {
      this.window.record(now, failure, slow);
      if (failure) {
        this.failureRun++;
        if (this.shouldTripOnFailure()) this.open(now);
        else if (slow && this.shouldTripOnSlow()) this.open(now);
      } else {
        this.failureRun = 0;
        if (slow && this.shouldTripOnSlow()) this.open(now);
      }
    } else if (this.current === 'recovering' && admission === Admission.Recovering) {
      this.window.record(now, failure, slow);
      if (failure) {
        this.open(now);
        return;
      }
      if (slow) this.ramp!.onSlow();
      else this.ramp!.onFast();
      if (this.ramp!.fraction(now) >= 1) this.close();
    }
  }

  /** Ms of break left: the served break's remainder while open (0 otherwise); see {@link isolate}. */
  retryAfter(): number {
    const now = this.clock.now();
    if (this.current !== 'closed') this.refresh(now);
    if (this.current === 'open') return this.openUntil - now;
    if (this.current === 'isolated') {
      const left = this.openUntil - now;
      return left > this.config.breakDuration ? left : this.config.breakDuration;
    }
    return 0;
  }

  /**
   * Holds the breaker open (state `isolated`) until the returned function has been called; nested
   * isolations stack and the last release ends it. On release the breaker is `open` if the break it
   * was serving has time left, otherwise `halfOpen` (probes confirm the dependency before traffic
   * returns). While isolated, {@link retryAfter} reports the break left, at least `breakDuration`.
   * Releasing twice, or after {@link reset}, does nothing.
   * @returns the release function
   */
  isolate(): () => void {
    const now = this.clock.now();
    this.isolations++;
    const epoch = this.isolationEpoch;
    if (this.current !== 'isolated') {
      this.dropProbes();
      this.transition('isolated');
    }
    let released = false;
    return () => {
      if (released || epoch !== this.isolationEpoch) return;
      released = true;
      if (--this.isolations > 0) return;
      const at = this.clock.now();
      if (at < this.openUntil) this.transition('open');
      else this.enterHalfOpen();
    };
  }

  /**
   * Closes the breaker now: clears the consecutive-open doubling, the failure run, the trip window,
   * held probes and any isolation (outstanding release functions become no-ops). Both baselines are kept.
   */
  reset(): void {
    const now = this.clock.now();
    this.isolationEpoch++;
    this.isolations = 0;
    this.window.clearTripWindow(now);
    this.openUntil = -Infinity;
    this.close();
  }

  /**
   * Adopts new settings keeping the state, the break being served and the baselines (a config reload).
   * Changing `tripWindow` or `baselineWindow` starts both windows afresh. Turning `recovery` off
   * while recovering closes the breaker. New break, probe and threshold values apply from the next
   * decision that uses them.
   * @throws PolicyConfigError (field `breaker.*`) for invalid settings; the breaker is left unchanged.
   */
  reconfigure(settings: BreakerSettings | ResolvedBreakerSettings): void {
    const next = resolve(settings);
    const now = this.clock.now();
    if (next.tripWindow !== this.config.tripWindow || next.baselineWindow !== this.config.baselineWindow) {
      this.window = new OutcomeWindow(next.tripWindow, next.baselineWindow, now);
      this.latency = new LatencyBaseline(next.tripWindow, next.baselineWindow, next.latencyBaselineSamples);
    } else {
      this.latency.minimumSamples = next.latencyBaselineSamples;
    }
    this.config = next;
    if (next.recovery === undefined) {
      this.ramp = undefined;
      if (this.current === 'recovering') this.close();
    } else if (this.ramp === undefined) {
      this.ramp = new RecoveryRamp(next.recovery);
    } else {
      this.ramp.settings = next.recovery;
    }
  }

  /** A plain-object reading (allocates; for health checks, not the hot path). */
  snapshot(): BreakerSnapshot {
    const now = this.clock.now();
    const state = this.state;
    this.window.advance(now);
    const baseCalls = this.window.baselineCalls;
    return {
      state,
      breakMs: this.served,
      breakRemaining: state === 'open' || state === 'isolated' ? Math.max(0, this.openUntil - now) : 0,
      consecutiveOpens: this.opens,
      consecutiveFailures: this.failureRun,
      probesInFlight: this.probes,
      admittedFraction: this.admittedFraction(state, now),
      errorBaselineWarm: baseCalls >= this.config.errorBaselineSamples,
      errorBaselineCalls: baseCalls,
      errorBaselineRate: baseCalls > 0 ? this.window.baselineFailures / baseCalls : undefined,
      tripWindowCalls: this.window.tripCalls,
      tripWindowFailures: this.window.tripFailures,
      tripWindowSlow: this.window.tripSlow,
      latencyBaselineWarm: this.latency.isWarm(now),
      latencyMedian: this.latency.median(now),
    };
  }

  private admittedFraction(state: BreakerState, now: number): number {
    switch (state) {
      case 'closed':
        return 1;
      case 'recovering':
        return this.ramp!.fraction(now);
      case 'halfOpen':
        return this.probes < this.config.halfOpenProbes ? 1 : 0;
      default:
        return 0;
    }
  }

  private admitNotClosed(now: number): Admission {
    this.refresh(now);
    switch (this.current) {
      case 'closed':
        return Admission.Closed;
      case 'halfOpen':
        if (this.probes >= this.config.halfOpenProbes) return Admission.Refused;
        this.holdProbe(now);
        return Admission.Probe;
      case 'recovering':
        return this.random() < this.ramp!.fraction(now) ? Admission.Recovering : Admission.Refused;
      default:
        return Admission.Refused;
    }
  }

  /** Performs the transitions that time alone makes due. */
  private refresh(now: number): void {
    if (this.current === 'open') {
      if (now >= this.openUntil) this.enterHalfOpen();
    } else if (this.current === 'recovering') {
      if (this.ramp!.fraction(now) >= 1) this.close();
    }
  }

  private holdProbe(now: number): void {
    this.probes++;
    this.probeAdmittedAt.push(now);
    // A closure per probe (rare, half-open only) so a timer frees exactly its own probe.
    const timer: TimerHandle = this.clock.setTimer(this.config.probeTimeout, () => this.expireProbe(timer));
    this.probeTimers.push(timer);
  }

  /** Releases held probe `index` and clears its timer. */
  private releaseProbe(index: number): void {
    this.clock.clearTimer(this.probeTimers[index]!);
    this.probeTimers.splice(index, 1);
    this.probeAdmittedAt.splice(index, 1);
    this.probes--;
  }

  /** The held probe an attempt that started at `startedAt` belongs to (the latest admitted by then), or -1. */
  private probeStartedAt(startedAt: number): number {
    const admitted = this.probeAdmittedAt;
    for (let i = admitted.length - 1; i >= 0; i--) {
      if (admitted[i]! <= startedAt + PROBE_MATCH_TOLERANCE) return i;
    }
    return -1;
  }

  private settleProbe(verdict: VerdictKind, durationMs: number): void {
    const now = this.clock.now();
    if (verdict === 'Ok') this.latency.add(now, durationMs);
    if (this.current !== 'halfOpen' || this.probes === 0) return;
    let index = 0;
    if (this.orphans > 0) {
      index = this.probeStartedAt(now - (durationMs > 0 ? durationMs : 0));
      if (index < 0) {
        this.orphans--;
        return;
      }
    }
    this.releaseProbe(index);
    if (verdict !== 'Ok' && verdict !== 'Transient') return;
    const slow = durationMs > this.slowThreshold(now);
    this.window.record(now, verdict === 'Transient', slow);
    if (verdict === 'Transient' || slow) {
      this.open(now);
      return;
    }
    if (++this.probeStreak < this.config.closeAfter) return;
    if (this.ramp === undefined) {
      this.close();
      return;
    }
    this.dropProbes();
    this.ramp.begin(now, this.served);
    this.transition('recovering');
  }

  /** Timer callback: a probe outlived `probeTimeout`; its slot comes back and the success streak restarts. */
  private expireProbe(timer: TimerHandle): void {
    const index = this.probeTimers.indexOf(timer);
    if (index < 0) return;
    this.releaseProbe(index);
    this.orphans++;
    this.probeStreak = 0;
  }

  /** Frees every held probe slot; their late records will match no held probe. */
  private dropProbes(): void {
    for (const timer of this.probeTimers) this.clock.clearTimer(timer);
    this.probeTimers.length = 0;
    this.probeAdmittedAt.length = 0;
    this.orphans += this.probes;
    this.probes = 0;
    this.probeStreak = 0;
  }

  private shouldTripOnFailure(): boolean {
    const s = this.config;
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
    return calls >= this.config.minimumThroughput && this.window.tripSlow / calls >= this.config.slowCallRatio;
  }

  /** Durations above this (ms) are slow; +Infinity while the latency baseline is cold or the rule is off. */
  private slowThreshold(now: number): number {
    const multiple = this.config.slowCallMultiple;
    if (multiple === 0) return Infinity;
    const median = this.latency.median(now);
    return median === undefined ? Infinity : multiple * median;
  }

  private open(now: number): void {
    this.opens++;
    const nominal = nominalBreak(this.opens, this.config.breakDuration, this.config.maximumBreak);
    this.served = servedBreak(nominal, this.config.jitter, this.random);
    this.openUntil = now + this.served;
    this.failureRun = 0;
    this.window.clearTripWindow(now);
    this.dropProbes();
    this.transition('open');
  }

  private enterHalfOpen(): void {
    this.probeStreak = 0;
    this.transition('halfOpen');
  }

  private close(): void {
    this.dropProbes();
    this.opens = 0;
    this.failureRun = 0;
    this.transition('closed');
  }

  private transition(to: BreakerState): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    const listener = this.onTransition;
    if (listener === undefined) return;
    try {
      listener(from, to, this.served);
    } catch {
      // A listener must not be able to leave the breaker half-transitioned.
    }
  }
}

/** Slack (ms) when matching a probe record to a held probe by its start time. */
const PROBE_MATCH_TOLERANCE = 1;

function resolve(settings: BreakerSettings | ResolvedBreakerSettings): ResolvedBreakerSettings {
  // A resolved object may carry `recovery: undefined`, which validation reads as "off" as well.
  return validateBreakerSettings(settings, 'breaker');
}
