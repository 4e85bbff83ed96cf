import type { StopReason } from '../../core/index.js';
import { FRACTION_RULE } from '../../core/internal.js';
import type { FaultWindow } from './dependency.js';

/** Breaker state as the report shows it per second (the most severe state seen in that second). */
export type SimulatedBreakerState = 'closed' | 'halfOpen' | 'open';

/** One simulated second of a {@link SimulationReport}. */
export interface SecondReport {
  /** Index of the second from the start of the run (0 = [0 ms, 1000 ms)). */
  readonly second: number;
  /** Calls that arrived in this second. */
  readonly calls: number;
  /** Attempts that reached the dependency in this second (sent in it, whichever call they belong to). */
  readonly dependencyRequests: number;
  /** Calls that arrived in this second and eventually succeeded. */
  readonly succeeded: number;
  /** `succeeded / calls` (1 when no call arrived), rounded to 4 decimals. */
  readonly availability: number;
  /**
   * The most severe breaker state seen during the second (`open` > `halfOpen` > `closed`, from the
   * breaker's events), or `null` when the policy has no breaker.
   */
  readonly breakerState: SimulatedBreakerState | null;
  /** Retry-budget utilization (0 = full bucket, 1 = empty) at the end of the second, 4 decimals; `null` without a budget. */
  readonly budgetUtilization: number | null;
}

/** What the dependency model did during a run. */
export interface DependencyCounters {
  /** Requests (attempts) received, including those refused or abandoned. */
  readonly requests: number;
  /** Refused at once because every worker was busy and the queue full. */
  readonly overloaded: number;
  /** Failed at the server-side timeout. */
  readonly timedOut: number;
  /** Answered with an injected error (outage, failing). */
  readonly failed: number;
  /** Left early because the attempt's signal aborted (attempt timeout, deadline). */
  readonly abandoned: number;
}

/** Everything a run measured, as the report is built from it. @internal */
export interface SimulationData {
  readonly seed: number;
  readonly duration: number;
  readonly policy: string;
  readonly dependency: string;
  readonly load: string;
  readonly calls: number;
  readonly succeeded: number;
  readonly unfinished: number;
  readonly reasons: Readonly<Partial<Record<StopReason, number>>>;
  readonly breakerOpens: number;
  readonly faultWindow: FaultWindow | undefined;
  readonly counters: DependencyCounters;
  readonly durations: Float64Array;
  /** Durations of the calls that made at least one attempt (not refused before their first). */
  readonly admittedDurations: Float64Array;
  readonly seconds: {
    readonly calls: Int32Array;
    readonly requests: Int32Array;
    readonly succeeded: Int32Array;
    readonly breaker: Int8Array;
    readonly utilization: Float64Array;
  };
  readonly hasBreaker: boolean;
  readonly hasBudget: boolean;
}

/** Consecutive healthy seconds that mark a recovery (see {@link SimulationReport.timeToRecover}). */
export const RECOVERY_SECONDS = 3;
/** Share of the pre-fault availability a second must reach to count as recovered. */
export const RECOVERY_LEVEL = 0.99;

/** Breaker states by severity: a state's index is its level in the per-second series and the chart. */
export const BREAKER_STATES: readonly SimulatedBreakerState[] = ['closed', 'halfOpen', 'open'];

/** Rounds to `digits` decimals (half away from zero for positives), the JSON's only float rule. */
function fixed(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * The result of `Simulate...run(seed)` (DESIGN §8): what a policy cost its dependency and what it
 * gave its callers. Ratios are plain numbers; durations are ms.
 *
 * - `availability`: succeeded / calls.
 * - `loadMultiplier`: attempts that reached the dependency per call, over the whole run.
 * - `amplification`: the same ratio in the worst single second (the second the dependency feels).
 * - `latency(q)`: call latency quantile, as callers waited (successful and failed calls alike).
 * - `breakerOpens`: `breakerOpened` events.
 * - `timeToRecover`: see the getter.
 *
 * `toJSON()` rounds every float to a fixed number of decimals (ratios 4, ms 3), so the same seed gives
 * byte-identical `JSON.stringify(report)` on any machine.
 */
export class SimulationReport {
  /** The seed the run used. */
  readonly seed: number;
  /** Simulated duration in ms (arrivals stop then; calls in flight are followed to their end). */
  readonly duration: number;
  /** Policy name (`''` when unnamed). */
  readonly policy: string;
  /** The dependency model, described. */
  readonly dependency: string;
  /** The load model, described. */
  readonly load: string;
  /** Calls made. */
  readonly calls: number;
  /** Calls that succeeded. */
  readonly succeeded: number;
  /** Calls that failed (including `unfinished`). */
  readonly failed: number;
  /** Calls still unsettled when the drain limit after the run ended (counted as failed). */
  readonly unfinished: number;
  /** Calls by stop reason. */
  readonly reasons: Readonly<Partial<Record<StopReason, number>>>;
  /** `succeeded / calls` (1 without calls). */
  readonly availability: number;
  /** Attempts that reached the dependency. */
  readonly dependencyRequests: number;
  /** `dependencyRequests / calls` (0 without calls). */
  readonly loadMultiplier: number;
  /** The highest `dependencyRequests / calls` of any second with calls. */
  readonly amplification: number;
  /** The second where `amplification` was measured (-1 without calls). */
  readonly worstSecond: number;
  /** Breaker opens (`breakerOpened` events). */
  readonly breakerOpens: number;
  /** The dependency's impairment window (ms), if it had one. */
  readonly faultWindow: FaultWindow | undefined;
  /** Availability of the whole seconds before the fault (1 when there are none or no fault). */
  readonly preFaultAvailability: number;
  /** What the dependency model did. */
  readonly dependencyCounters: DependencyCounters;
  /** One entry per simulated second. */
  readonly perSecond: readonly SecondReport[];

  private readonly durations: Float64Array;
  private sorted = false;
  private readonly admitted: Float64Array;
  private admittedSorted = false;

  /** @internal built by the simulator. */
  constructor(data: SimulationData) {
    this.seed = data.seed;
    this.duration = data.duration;
    this.policy = data.policy;
    this.dependency = data.dependency;
    this.load = data.load;
    this.calls = data.calls;
    this.succeeded = data.succeeded;
    this.failed = data.calls - data.succeeded;
    this.unfinished = data.unfinished;
    this.reasons = data.reasons;
    this.availability = data.calls === 0 ? 1 : data.succeeded / data.calls;
    this.breakerOpens = data.breakerOpens;
    this.faultWindow = data.faultWindow;
    this.dependencyCounters = data.counters;
    this.dependencyRequests = data.counters.requests;
    this.loadMultiplier = data.calls === 0 ? 0 : data.counters.requests / data.calls;
    this.durations = data.durations;
    this.admitted = data.admittedDurations;

    const s = data.seconds;
    const perSecond: SecondReport[] = [];
    let amplification = 0;
    let worstSecond = -1;
    for (let i = 0; i < s.calls.length; i++) {
      const calls = s.calls[i]!;
      const requests = s.requests[i]!;
      if (calls > 0 && requests / calls > amplification) {
        amplification = requests / calls;
        worstSecond = i;
      }
      perSecond.push(
        Object.freeze({
          second: i,
          calls,
          dependencyRequests: requests,
          succeeded: s.succeeded[i]!,
          availability: calls === 0 ? 1 : fixed(s.succeeded[i]! / calls, 4),
          breakerState: data.hasBreaker ? BREAKER_STATES[s.breaker[i]!]! : null,
          budgetUtilization: data.hasBudget ? fixed(s.utilization[i]!, 4) : null,
        }),
      );
    }
    this.perSecond = Object.freeze(perSecond);
    this.amplification = amplification;
    this.worstSecond = worstSecond;

    let preCalls = 0;
    let preSucceeded = 0;
    const fault = data.faultWindow;
    if (fault !== undefined) {
      for (let i = 0; (i + 1) * 1000 <= fault.start && i < s.calls.length; i++) {
        preCalls += s.calls[i]!;
        preSucceeded += s.succeeded[i]!;
      }
    }
    this.preFaultAvailability = preCalls === 0 ? 1 : preSucceeded / preCalls;
  }

  /**
   * Milliseconds from the end of the fault window until callers were served as before: the start of
   * the first whole second at or after the fault's end from which per-second availability stays
   * >= 99 % of {@link SimulationReport.preFaultAvailability} for 3 consecutive seconds (fewer when the
   * run ends first), minus the fault's end. Resolution: one second (0 = the first whole second after
   * the fault was already healthy). `undefined` when the dependency had no brownout or outage, or when
   * availability never came back within the run.
   */
  get timeToRecover(): number | undefined {
    const fault = this.faultWindow;
    if (fault === undefined) return undefined;
    const threshold = RECOVERY_LEVEL * this.preFaultAvailability;
    const seconds = this.perSecond;
    for (let first = Math.ceil(fault.end / 1000); first < seconds.length; first++) {
      let healthy = true;
      for (let i = first; i < first + RECOVERY_SECONDS && i < seconds.length; i++) {
        const second = seconds[i]!;
        if (second.calls > 0 && second.succeeded / second.calls < threshold) {
          healthy = false;
          break;
        }
      }
      if (healthy) return first * 1000 - fault.end;
    }
    return undefined;
  }

  /**
   * Call latency at quantile `q` in ms (nearest rank over every settled call, successful or failed).
   * @param q a quantile in [0, 1] (0.99 = p99)
   * @returns 0 when no call settled
   * @throws RangeError when `q` is outside [0, 1].
   */
  latency(q: number): number {
    // A RangeError, not a PolicyConfigError: a mistake in reading the report, not an option.
    if (!FRACTION_RULE.accepts(q))
      throw new RangeError(`latency(q): q ${FRACTION_RULE.rule}, got ${String(q)}`);
    const values = this.durations;
    if (values.length === 0) return 0;
    if (!this.sorted) {
      values.sort();
      this.sorted = true;
    }
    const rank = Math.max(1, Math.ceil(q * values.length));
    return values[rank - 1]!;
  }

  /**
   * Latency at quantile `q` in ms of the calls that were admitted: that made at least one attempt
   * (a call a limiter, a breaker or a throttle refused before its first attempt is left out), which
   * is what the callers who got through waited. Nearest rank; 0 without such calls.
   * @param q a quantile in [0, 1]
   * @throws RangeError when `q` is outside [0, 1]
   */
  admittedLatency(q: number): number {
    if (!FRACTION_RULE.accepts(q))
      throw new RangeError(`admittedLatency(q): q ${FRACTION_RULE.rule}, got ${String(q)}`);
    const values = this.admitted;
    if (values.length === 0) return 0;
    if (!this.admittedSorted) {
      values.sort();
      this.admittedSorted = true;
    }
    return values[Math.max(1, Math.ceil(q * values.length)) - 1]!;
  }

  /** A plain object with every figure, floats rounded (ratios 4 decimals, ms 3): byte-identical for a seed. */
  toJSON(): SimulationReportJSON {
    return {
      seed: this.seed,
      duration: this.duration,
      policy: this.policy,
      dependency: this.dependency,
      load: this.load,
      calls: this.calls,
      succeeded: this.succeeded,
      failed: this.failed,
      unfinished: this.unfinished,
      reasons: { ...this.reasons },
      availability: fixed(this.availability, 4),
      dependencyRequests: this.dependencyRequests,
      loadMultiplier: fixed(this.loadMultiplier, 4),
      amplification: fixed(this.amplification, 4),
      worstSecond: this.worstSecond,
      latency: {
        p50: fixed(this.latency(0.5), 3),
        p90: fixed(this.latency(0.9), 3),
        p99: fixed(this.latency(0.99), 3),
        p999: fixed(this.latency(0.999), 3),
      },
      breakerOpens: this.breakerOpens,
      timeToRecover: this.timeToRecover === undefined ? null : fixed(this.timeToRecover, 3),
      faultWindow:
        this.faultWindow === undefined
          ? null
          : { start: this.faultWindow.start, end: this.faultWindow.end },
      preFaultAvailability: fixed(this.preFaultAvailability, 4),
      dependencyCounters: { ...this.dependencyCounters },
      perSecond: this.perSecond.map((s) => ({ ...s })),
    };
  }

  /**
   * A readable report: the summary figures, then the per-second series in rows of `every` seconds
   * (calls and requests summed, availability over the rows' calls, the most severe breaker state,
   * the last budget utilization).
   * @param every seconds per row, an integer >= 1 (default: enough to keep about 30 rows)
   */
  toString(every?: number): string {
    const n = this.perSecond.length;
    const step =
      every !== undefined && Number.isInteger(every) && every >= 1
        ? every
        : Math.max(1, Math.ceil(n / 30));
    const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
    const ms = (x: number) => `${x.toFixed(1)}ms`;
    const ttr = this.timeToRecover;
    const lines = [
      `Simulation seed ${this.seed} over ${clockTime(this.duration)}${this.policy ? ` — policy ${this.policy}` : ''}`,
      `  Dependency       ${this.dependency}`,
      `  Load             ${this.load}`,
      `  Calls            ${this.calls}`,
      `  Succeeded        ${this.succeeded}`,
      `  Failed           ${this.failed}${this.unfinished > 0 ? ` (${this.unfinished} unfinished)` : ''}`,
      `  Availability     ${pct(this.availability)}`,
      `  LoadMultiplier   ${this.loadMultiplier.toFixed(3)}`,
      `  Amplification    ${this.amplification.toFixed(3)}${this.worstSecond >= 0 ? ` (second ${this.worstSecond})` : ''}`,
      `  Latency p50      ${ms(this.latency(0.5))}`,
      `  Latency p99      ${ms(this.latency(0.99))}`,
      `  BreakerOpens     ${this.breakerOpens}`,
      `  TimeToRecover    ${ttr === undefined ? (this.faultWindow === undefined ? 'n/a (no fault window)' : 'not recovered') : ms(ttr)}`,
      `  Stop reasons     ${Object.entries(this.reasons)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      '',
      '  seconds     calls  requests  ampl.  avail.    breaker   budget',
    ];
    for (let i = 0; i < n; i += step) {
      const rows = this.perSecond.slice(i, i + step);
      const calls = rows.reduce((a, r) => a + r.calls, 0);
      const requests = rows.reduce((a, r) => a + r.dependencyRequests, 0);
      const succeeded = rows.reduce((a, r) => a + r.succeeded, 0);
      const breaker = rows.reduce<SimulatedBreakerState | null>((worst, r) => {
        if (r.breakerState === null) return worst;
        return worst === null ||
          BREAKER_STATES.indexOf(r.breakerState) > BREAKER_STATES.indexOf(worst)
          ? r.breakerState
          : worst;
      }, null);
      const budget = rows[rows.length - 1]!.budgetUtilization;
      const range = step === 1 ? `${i}` : `${i}–${Math.min(n, i + step) - 1}`;
      lines.push(
        `  ${range.padEnd(9)} ${String(calls).padStart(7)} ${String(requests).padStart(9)} ${(calls === 0 ? 0 : requests / calls).toFixed(2).padStart(6)} ${pct(calls === 0 ? 1 : succeeded / calls).padStart(8)}  ${(breaker ?? '-').padEnd(8)} ${budget === null ? '   -' : pct(budget).padStart(7)}`,
      );
    }
    return lines.join('\n');
  }
}

/** The JSON form of a {@link SimulationReport} (see `toJSON`). */
export interface SimulationReportJSON {
  seed: number;
  duration: number;
  policy: string;
  dependency: string;
  load: string;
  calls: number;
  succeeded: number;
  failed: number;
  unfinished: number;
  reasons: Partial<Record<StopReason, number>>;
  availability: number;
  dependencyRequests: number;
  loadMultiplier: number;
  amplification: number;
  worstSecond: number;
  latency: { p50: number; p90: number; p99: number; p999: number };
  breakerOpens: number;
  timeToRecover: number | null;
  faultWindow: FaultWindow | null;
  preFaultAvailability: number;
  dependencyCounters: DependencyCounters;
  perSecond: SecondReport[];
}

/** `300000` → `00:05:00` (ms shown when not whole seconds). */
function clockTime(ms: number): string {
  const total = Math.floor(ms / 1000);
  const hh = String(Math.floor(total / 3600)).padStart(2, '0');
  const mm = String(Math.floor((total % 3600) / 60)).padStart(2, '0');
  const ss = String(total % 60).padStart(2, '0');
  const rest = ms - total * 1000;
  return `${hh}:${mm}:${ss}${rest > 0 ? `.${String(Math.round(rest)).padStart(3, '0')}` : ''}`;
}
