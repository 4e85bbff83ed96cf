import type { VerdictKind } from '../classification/verdict.js';
import type { Clock } from '../time/clock.js';
import { nominalBreak, servedBreak } from './break-duration.js';
import {
  type BreakerSettings,
  type ResolvedBreakerSettings,
  validateBreakerSettings,
} from './breaker-settings.js';
import {
  Admission,
  type BreakerSnapshot,
  type BreakerState,
  type BreakerTransitionListener,
  type BreakerTrip,
} from './breaker-state.js';
import { ProbeSlots } from './probe-slots.js';
import { RecoveryRamp } from './recovery-ramp.js';
import { TripRules } from './trip-rules.js';

/** What a {@link CircuitBreaker} runs on. */
export interface BreakerDeps {
  /** The only source of time (monotonic ms) and of timers. */
  clock: Clock;
  /** Uniform numbers in [0, 1) for break jitter and recovery admission. */
  random: () => number;
  /** Called after each state change. */
  onTransition?: BreakerTransitionListener;
}

/**
 * A circuit breaker that measures instead of guessing (DESIGN §3.6). It samples attempts, not calls:
 * the executor calls {@link admit} before every attempt and {@link record} exactly once after every
 * admitted one.
 *
 * Trips (evaluated when an attempt adds evidence — a Transient or a slow attempt — while closed):
 * - a run of Transient attempts (Ok breaks the run; Throttled, Permanent and Limited neither extend
 *   nor break it): by default the measured streak (5 at a cold start or for a healthy dependency,
 *   longer where the recent error rate makes a run likely, never under the 50 % failure-rate floor);
 *   an explicit `consecutiveFailures: N` trips on exactly N in a row whatever the history;
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
 * Breaks: `breakDuration` (default 1000 ms) doubled per consecutive open up to `maximumBreak` (default
 * 1000 ms, so no doubling unless it is set longer), jittered
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
  private readonly trips: TripRules;
  // A probe that times out restarts the success streak: its dependency did not answer in time.
  private readonly probes: ProbeSlots;
  private ramp: RecoveryRamp | undefined;
  private current: BreakerState = 'closed';
  private opens = 0;
  private served = 0;
  private openUntil = -Infinity;
  /** The error of the last Transient attempt recorded, for the opening's report. */
  private lastError: unknown = undefined;
  private probeStreak = 0;
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
    this.trips = new TripRules(this.config, this.clock.now());
    this.probes = new ProbeSlots(this.clock, () => (this.probeStreak = 0));
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
   * True while closed: {@link admit} would answer `Closed` and change nothing. No clock read.
   * @internal the executor's fast path
   */
  get closed(): boolean {
    return this.current === 'closed';
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
   * @param timely false while the event loop is saturated (the policy's `saturation`): the duration is
   *   the loop's as much as the dependency's, so it neither feeds the latency baseline nor counts as
   *   slow; the outcome still counts. Default true.
   * @param error a Transient attempt's error, named in the report of an opening it causes
   */
  record(
    admission: Admission,
    verdict: VerdictKind,
    durationMs: number,
    at?: number,
    timely = true,
    error?: unknown,
  ): void {
    if (admission === Admission.Refused) return;
    if (verdict === 'Transient') this.lastError = error;
    if (admission === Admission.Probe) {
      this.settleProbe(verdict, durationMs, timely);
      return;
    }
    if (verdict !== 'Ok' && verdict !== 'Transient') return;
    const now = at ?? this.clock.now();
    const failure = verdict === 'Transient';
    const slow = timely && this.trips.isSlow(now, durationMs);
    if (!failure && timely) this.trips.addSuccess(now, durationMs);
    if (this.current === 'closed') {
      if (this.trips.recordClosed(now, failure, slow)) {
        const evidence = this.trips.evidence(now);
        // Slowness is not a failure: an earlier Transient error did not cause this trip.
        const lastError = evidence.cause === 'slow' ? undefined : this.lastError;
        this.open(now, { ...evidence, lastError });
      }
    } else if (this.current === 'recovering' && admission === Admission.Recovering) {
      this.trips.sample(now, failure, slow);
      if (failure) {
        this.open(now, { cause: 'recovery', count: 1, spanMs: 0, lastError: this.lastError });
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
   * The hint (ms) an attempt refused now carries (`CallRejectedError.retryAfter`, the filter's
   * `Retry-After`), always > 0:
   * - open or isolated: {@link retryAfter}, the break left;
   * - half-open with every probe slot held: the time until the first probe's verdict is due at the
   *   latest (its `probeTimeout` frees the slot), capped at the break last served (`breakDuration`
   *   before any), at least 1 ms. A half-open breaker is nearer to recovery than the open one before
   *   it, so it never asks callers to stay away longer than that break did; and a probe usually
   *   settles within an attempt, so with the defaults (1 s break, 30 s probe timeout) callers are
   *   told 1 s — when they come back the probe has answered: the breaker admits the next probe or
   *   closes, or it re-opened and its refusal carries the new break;
   * - otherwise (recovering, or a slot came back during the guarded pause): 1 ms, the smallest hint
   *   — the breaker admits (some) attempts now.
   */
  refusalRetryAfter(): number {
    const left = this.retryAfter();
    if (left > 0) return left;
    if (this.current !== 'halfOpen' || this.probes.held < this.config.halfOpenProbes) return 1;
    const lastBreak = this.served > 0 ? this.served : this.config.breakDuration;
    return Math.max(1, Math.min(this.probes.untilFirstRelease(this.clock.now()), lastBreak));
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
   * the recent outcomes (their error rate no longer lengthens the next run nor holds the floor), held
   * probes and any isolation (outstanding release functions become no-ops). Both baselines are kept.
   */
  reset(): void {
    const now = this.clock.now();
    this.isolationEpoch++;
    this.isolations = 0;
    this.trips.reset(now);
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
    this.trips.reconfigure(next, this.clock.now());
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
    return {
      state,
      breakMs: this.served,
      breakRemaining:
        state === 'open' || state === 'isolated' ? Math.max(0, this.openUntil - now) : 0,
      consecutiveOpens: this.opens,
      probesInFlight: this.probes.held,
      admittedFraction: this.admittedFraction(state, now),
      ...this.trips.readings(now),
    };
  }

  private admittedFraction(state: BreakerState, now: number): number {
    switch (state) {
      case 'closed':
        return 1;
      case 'recovering':
        return this.ramp!.fraction(now);
      case 'halfOpen':
        return this.probes.held < this.config.halfOpenProbes ? 1 : 0;
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
        if (this.probes.held >= this.config.halfOpenProbes) return Admission.Refused;
        this.probes.hold(now, this.config.probeTimeout);
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

  private settleProbe(verdict: VerdictKind, durationMs: number, timely: boolean): void {
    const now = this.clock.now();
    if (verdict === 'Ok' && timely) this.trips.addSuccess(now, durationMs);
    if (this.current !== 'halfOpen' || !this.probes.settle(now, durationMs)) return;
    if (verdict !== 'Ok' && verdict !== 'Transient') return;
    const slow = timely && this.trips.isSlow(now, durationMs);
    this.trips.sample(now, verdict === 'Transient', slow);
    if (verdict === 'Transient' || slow) {
      if (verdict === 'Transient')
        this.open(now, { cause: 'probe', count: 1, spanMs: durationMs, lastError: this.lastError });
      else
        this.open(now, { cause: 'slowProbe', count: 1, spanMs: durationMs, lastError: undefined });
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

  /** Frees every held probe slot and restarts the success streak. */
  private dropProbes(): void {
    this.probes.dropAll();
    this.probeStreak = 0;
  }

  private open(now: number, trip: BreakerTrip): void {
    this.opens++;
    const nominal = nominalBreak(this.opens, this.config.breakDuration, this.config.maximumBreak);
    this.served = servedBreak(nominal, this.config.jitter, this.random);
    this.openUntil = now + this.served;
    this.trips.clearTrip(now);
    this.dropProbes();
    this.transition('open', trip);
  }

  private enterHalfOpen(): void {
    this.probeStreak = 0;
    this.transition('halfOpen');
  }

  private close(): void {
    this.dropProbes();
    this.opens = 0;
    this.trips.clearRun();
    this.transition('closed');
  }

  private transition(to: BreakerState, trip?: BreakerTrip): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    const listener = this.onTransition;
    if (listener === undefined) return;
    try {
      listener(from, to, this.served, trip);
    } catch {
      // A listener must not be able to leave the breaker half-transitioned.
    }
  }
}

function resolve(settings: BreakerSettings | ResolvedBreakerSettings): ResolvedBreakerSettings {
  // A resolved object may carry `recovery: undefined`, which validation reads as "off" as well.
  return validateBreakerSettings(settings, 'breaker');
}
