/**
 * What a hop does with a request that carries the nested-retry marker (`X-NResilience-Retrying: 1`,
 * "the client above you will retry this"): `'report'` (the default) records a
 * `nestedRetry` event and retries as usual; `'singleShot'` also runs that request's outbound calls
 * with one attempt each (`Ambient.singleShot`), leaving the retrying to the hop above.
 */
export type NestedRetryMode = 'report' | 'singleShot';

/** What a {@link ChainReport} is built from (the driver's raw counts). @internal */
export interface ChainReportData {
  readonly seed: number;
  readonly duration: number;
  readonly hops: readonly string[];
  readonly dependency: string;
  readonly load: string;
  readonly nested: NestedRetryMode;
  readonly calls: number;
  readonly succeeded: number;
  readonly unfinished: number;
  /** Requests each hop received, frontend first (its calls), then the dependency's. */
  readonly received: readonly number[];
  readonly nestedRetry: readonly number[];
  readonly durations: readonly number[];
  readonly seconds: {
    readonly calls: Int32Array;
    readonly requests: Int32Array;
    readonly succeeded: Int32Array;
  };
}

/** One simulated second of a chain. */
export interface ChainSecond {
  /** Calls that arrived at the frontend in this second. */
  readonly calls: number;
  /** Requests the dependency below the last hop received in this second. */
  readonly dependencyRequests: number;
  /** Calls arrived in this second that succeeded. */
  readonly succeeded: number;
}

/** The JSON form of a {@link ChainReport}. */
export interface ChainReportJSON {
  readonly seed: number;
  readonly duration: number;
  readonly hops: readonly string[];
  readonly dependency: string;
  readonly load: string;
  readonly nested: NestedRetryMode;
  readonly calls: number;
  readonly succeeded: number;
  readonly unfinished: number;
  readonly availability: number;
  readonly bottomAmplification: number;
  readonly requestsPerCall: readonly number[];
  readonly worstSecond: number;
  readonly nestedRetry: readonly number[];
  readonly latency: { readonly p50: number; readonly p99: number };
}

const fixed = (value: number, digits: number): number => Number(value.toFixed(digits));

/**
 * What a simulated chain did (`Simulate.chain(...).run(seed)`): how many requests each hop and the
 * dependency at the bottom received per frontend call, the worst second at the bottom, the
 * frontend's availability and latency, and the nested-retry records each hop saw.
 */
export class ChainReport {
  /** The seed of the run. */
  readonly seed: number;
  /** Simulated ms of arrivals. */
  readonly duration: number;
  /** Each hop's name (its policy's, else `hop N`), frontend first. */
  readonly hops: readonly string[];
  /** The dependency model, as text. */
  readonly dependency: string;
  /** The load, as text. */
  readonly load: string;
  /** What hops did with marked requests. */
  readonly nested: NestedRetryMode;
  /** Calls the load made to the frontend. */
  readonly calls: number;
  /** Calls that succeeded. */
  readonly succeeded: number;
  /** Calls still unsettled when the drain limit ran out (counted as failed). */
  readonly unfinished: number;
  /**
   * Requests each hop received per frontend call, frontend first (1), then each hop below, the
   * dependency's last: `[1, 3, 9, 27]` for three hops of three attempts against a dead dependency.
   */
  readonly requestsPerCall: readonly number[];
  /** `nestedRetry` events each hop's calls reported (a marked request whose policy may retry), frontend first. */
  readonly nestedRetry: readonly number[];
  /** Per simulated second. */
  readonly perSecond: readonly ChainSecond[];
  private readonly sorted: Float64Array;

  /** @internal built by the simulator. */
  constructor(data: ChainReportData) {
    this.seed = data.seed;
    this.duration = data.duration;
    this.hops = data.hops;
    this.dependency = data.dependency;
    this.load = data.load;
    this.nested = data.nested;
    this.calls = data.calls;
    this.succeeded = data.succeeded;
    this.unfinished = data.unfinished;
    this.requestsPerCall = data.received.map((n) => (data.calls === 0 ? 0 : n / data.calls));
    this.nestedRetry = data.nestedRetry;
    const { calls, requests, succeeded } = data.seconds;
    this.perSecond = Array.from(calls, (n, s) => ({
      calls: n,
      dependencyRequests: requests[s]!,
      succeeded: succeeded[s]!,
    }));
    this.sorted = Float64Array.from(data.durations).sort();
  }

  /** Calls that succeeded / calls (0 without calls). */
  get availability(): number {
    return this.calls === 0 ? 0 : this.succeeded / this.calls;
  }

  /** Requests the dependency at the bottom received per frontend call: the chain's amplification. */
  get bottomAmplification(): number {
    return this.requestsPerCall[this.requestsPerCall.length - 1]!;
  }

  /** The highest per-second ratio of dependency requests to frontend calls (seconds with calls). */
  get worstSecond(): number {
    let worst = 0;
    for (const second of this.perSecond)
      if (second.calls > 0) worst = Math.max(worst, second.dependencyRequests / second.calls);
    return worst;
  }

  /**
   * Frontend call latency at quantile `q` in ms (nearest rank over every settled call).
   * @param q a quantile in [0, 1]
   */
  latency(q: number): number {
    const n = this.sorted.length;
    if (n === 0) return 0;
    return this.sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  }

  /** The report as plain JSON (ratios to 4 digits, latencies to 3). */
  toJSON(): ChainReportJSON {
    return {
      seed: this.seed,
      duration: this.duration,
      hops: this.hops,
      dependency: this.dependency,
      load: this.load,
      nested: this.nested,
      calls: this.calls,
      succeeded: this.succeeded,
      unfinished: this.unfinished,
      availability: fixed(this.availability, 4),
      bottomAmplification: fixed(this.bottomAmplification, 4),
      requestsPerCall: this.requestsPerCall.map((r) => fixed(r, 4)),
      worstSecond: fixed(this.worstSecond, 4),
      nestedRetry: this.nestedRetry,
      latency: { p50: fixed(this.latency(0.5), 3), p99: fixed(this.latency(0.99), 3) },
    };
  }
}
