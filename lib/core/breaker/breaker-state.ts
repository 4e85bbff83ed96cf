// The breaker's vocabulary: what admission decides, the states, and the reading health checks take.

/**
 * What `CircuitBreaker.admit` decided for one attempt. Numeric so admission allocates nothing.
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
 * - `isolated`: held open by `CircuitBreaker.isolate` until every isolation is released.
 */
export type BreakerState = 'closed' | 'open' | 'halfOpen' | 'recovering' | 'isolated';

/** What kind of evidence opened a breaker (see {@link BreakerTrip}). */
export type BreakerTripCause = 'failures' | 'slow' | 'probe' | 'slowProbe' | 'recovery';

/**
 * What a breaker opened on, as its log line and `breakerOpened` event report it:
 * - `failures`: a run of Transient attempts (`count` of them, the first `spanMs` before the trip) or
 *   an error rate over the trip window (`count` failures in the window, `spanMs` = the window);
 * - `slow`: slow attempts (`count` of them in the trip window, `spanMs` = the window);
 * - `probe`: a half-open probe failed (`count` 1, `spanMs` its duration);
 * - `slowProbe`: a half-open probe answered, but slowly (`count` 1, `spanMs` its duration);
 * - `recovery`: an attempt failed while recovering (`count` 1, `spanMs` 0).
 * `lastError` is the error of the last Transient attempt the breaker recorded: undefined when none,
 * and on a `slow` or `slowProbe` trip, which no failure caused.
 */
export interface BreakerTrip {
  readonly cause: BreakerTripCause;
  readonly count: number;
  /** Milliseconds. */
  readonly spanMs: number;
  readonly lastError: unknown;
}

/**
 * Told about every state change after it happened. `breakMs` is the break being served (on a move to
 * `open`, the new one) or, on other moves, the last break served (0 if it never opened). `trip` is
 * what the breaker opened on, given on a move to `open` from `closed`, `halfOpen` or `recovering`
 * (undefined otherwise). A throwing listener is swallowed: it cannot corrupt the breaker.
 */
export type BreakerTransitionListener = (
  from: BreakerState,
  to: BreakerState,
  breakMs: number,
  trip?: BreakerTrip,
) => void;

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
