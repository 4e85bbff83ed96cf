import { type Policy, PolicyConfigError, Resilience } from '../../core/index.js';
import { checkValue, given, POSITIVE_SPAN_RULE } from '../../core/internal.js';
import { SEED_RULE } from '../seeded-random.js';
import { type FleetLimitMode, type FleetRun, type FleetSetup, runFleet } from './fleet.js';
import { textTable } from './text-table.js';

/** The provider's limit in the fleet matrix: accepted requests per second, for the whole fleet. */
export const FLEET_LIMIT = 500;

/**
 * Calls per second each of the fleet's 10 processes is offered: 800 in all (1.6× the limit), uneven
 * as a fleet's traffic is (a busy replica, quiet ones), so a limit split evenly leaves headroom unused.
 */
export const FLEET_RATES: readonly number[] = Object.freeze([
  200, 150, 120, 100, 80, 60, 40, 20, 15, 15,
]);

/** One row of the fleet matrix: how the fleet limits itself and what the provider and the store do. */
export interface FleetScenario {
  /** Short name (`shared`). */
  readonly name: string;
  /** What it shows, in a few words. */
  readonly description: string;
  /** How the processes limit their calls. */
  readonly mode: FleetLimitMode;
  /** The store's outage, if any (ms from the start). */
  readonly outage?: FleetSetup['outage'];
  /** Whether the provider counts a strict sliding window instead of its token bucket. */
  readonly strictProvider?: boolean;
}

/** The fleet matrix's rows, in table order. */
export const FLEET_SCENARIOS: readonly FleetScenario[] = Object.freeze([
  {
    name: 'shared',
    description: 'one Limit.rate of 500/s (burst 50) shared through the store, 1 ms round trip',
    mode: 'shared',
  },
  {
    name: 'per-process',
    description: 'each process its own Limit.rate of 50/s (burst 5)',
    mode: 'perProcess',
  },
  { name: 'no-limit', description: 'no rate limit: the provider answers 429', mode: 'none' },
  {
    name: 'store-outage',
    description: 'shared; the store down from 0:10 for 10 s, back empty (a restarted Redis)',
    mode: 'shared',
    outage: { after: 10_000, lasting: 10_000, empty: true },
  },
  {
    name: 'strict-provider',
    description: 'shared, against a provider counting a strict sliding 1 s window',
    mode: 'shared',
    strictProvider: true,
  },
]);

/** When the store-outage row's store answers again, ms into the run. */
const STORE_BACK_AT = Math.max(
  ...FLEET_SCENARIOS.map((s) => (s.outage === undefined ? 0 : s.outage.after + s.outage.lasting)),
);

/** The shortest run whose store-outage row shows the return: the store's, and the 2 s of 429s counted after it (ms). */
const FLEET_OUTAGE_DURATION = STORE_BACK_AT + 2000;

/** Options of {@link FleetMatrix.run}. */
export interface FleetMatrixOptions {
  /** Seeds, each an integer in [0, 2^32 - 1], at least one. Default `[1, 2]`. */
  readonly seeds?: readonly number[];
  /**
   * Simulated ms of arrivals per run, > 0. Default 30 000. A run shorter than 22 000 ends before the
   * store-outage row's store returns (at 20 s) and the 2 s of 429s counted after it: that row's
   * `backIn` and `throttledAfterReturn` are then `null`, and the table says `after the run`.
   */
  readonly duration?: number;
  /** Told after each run finishes. */
  readonly onProgress?: (done: number, total: number, scenario: string, seed: number) => void;
}

/** One scenario × seed of the fleet matrix. Shares are 0..1; rates are per second of the run. */
export interface FleetCell {
  readonly seed: number;
  /** Calls offered to the fleet per second. */
  readonly offered: number;
  /** Requests the provider received per second (retries included). */
  readonly sent: number;
  /** Requests it accepted per second. */
  readonly accepted: number;
  /** `accepted` / the provider's limit: how much of the limit the fleet got. */
  readonly limitUsed: number;
  /** 429 answers / requests the provider received. */
  readonly throttled: number;
  /** Calls refused by a process's own limit / calls. */
  readonly limited: number;
  /** Calls that succeeded / calls. */
  readonly succeeded: number;
  /** Store round trips per attempt let through (`null` without a shared limit). */
  readonly roundTripsPerCall: number | null;
  /** Degraded episodes (one per process per store outage); 0 without one. */
  readonly degradedEpisodes: number;
  /**
   * ms from the store's return until every process shared the limit again (`null` without an outage,
   * when the run ends less than 2 s after the store's return, or when some process never did).
   */
  readonly backIn: number | null;
  /** 429s in the 2 s after the store came back (`null` without an outage or when the run ends first). */
  readonly throttledAfterReturn: number | null;
}

/** One scenario over every seed. */
export interface FleetRow {
  readonly scenario: string;
  readonly cells: readonly FleetCell[];
}

/** The fleet scenario called `name`. @throws PolicyConfigError (field `scenario`) naming the known ones. */
export function fleetScenario(name: string): FleetScenario {
  const found = FLEET_SCENARIOS.find((s) => s.name === name);
  if (found === undefined)
    throw new PolicyConfigError(
      'scenario',
      name,
      `must be one of ${FLEET_SCENARIOS.map((s) => s.name).join(', ')}`,
    );
  return found;
}

function cellOf(run: FleetRun, scenario: FleetScenario, duration: number, seed: number): FleetCell {
  const seconds = Math.ceil(duration / 1000);
  const returnsAt =
    scenario.outage === undefined ? undefined : scenario.outage.after + scenario.outage.lasting;
  const back = returnsAt !== undefined && returnsAt + 2000 <= duration ? returnsAt : undefined;
  const from = back === undefined ? 0 : Math.floor(back / 1000);
  return Object.freeze({
    seed,
    offered: run.calls / seconds,
    sent: run.requestsPerSecond.reduce((a, b) => a + b, 0) / seconds,
    accepted: run.acceptedPerSecond.reduce((a, b) => a + b, 0) / seconds,
    limitUsed: run.acceptedPerSecond.reduce((a, b) => a + b, 0) / seconds / FLEET_LIMIT,
    throttled: run.requests === 0 ? 0 : run.throttled / run.requests,
    limited: run.calls === 0 ? 0 : run.limited / run.calls,
    succeeded: run.calls === 0 ? 0 : run.succeeded / run.calls,
    roundTripsPerCall:
      scenario.mode === 'shared' && run.granted > 0 ? run.roundTrips / run.granted : null,
    degradedEpisodes: run.degradedEpisodes,
    backIn: back === undefined ? null : run.backIn,
    throttledAfterReturn:
      back === undefined
        ? null
        : run.throttledPerSecond.slice(from, from + 2).reduce((a, b) => a + b, 0),
  });
}

/**
 * The fleet matrix (DESIGN §8.1, a fleet sharing a rate limit): 10 processes offered
 * {@link FLEET_RATES} (800 calls/s in all) call one provider that accepts {@link FLEET_LIMIT}
 * requests a second (a token bucket holding 50) and answers the rest 429 with `Retry-After: 1`; one
 * row per {@link FLEET_SCENARIOS}: the limit shared through a store, split per process, none, the
 * store failing and coming back, and a stricter provider. Every process runs `policy` (default
 * `Resilience.default`) with the row's limit, on the simulator's virtual clock (deterministic).
 *
 * ```ts
 * const matrix = await FleetMatrix.run();
 * matrix.cell('shared', 1).limitUsed; // 0.99: the fleet gets the provider's limit
 * ```
 */
export const FleetMatrix = {
  /**
   * Runs the fleet matrix.
   * @throws PolicyConfigError naming `seeds`, `seeds[i]` or `duration` for a bad option, `limit` for a
   *   policy with its own limit (each row sets the processes' limit), or `budget` for a policy whose
   *   budget is `RetryBudget.using(bucket)`.
   */
  async run(
    policy: Policy = Resilience.default,
    options: FleetMatrixOptions = {},
  ): Promise<FleetMatrixReport> {
    const seeds = given(options.seeds, [1, 2]);
    if (!Array.isArray(seeds) || seeds.length === 0)
      throw new PolicyConfigError('seeds', seeds, 'must be a non-empty array of seeds');
    seeds.forEach((seed, index) => checkValue(SEED_RULE, `seeds[${index}]`, seed));
    const duration = checkValue(POSITIVE_SPAN_RULE, 'duration', given(options.duration, 30_000));
    if (policy.options.limit !== undefined)
      throw new PolicyConfigError(
        'limit',
        `a ${policy.options.limit.settings.kind} limit`,
        "must be unset in a policy run by the fleet matrix: each row sets the processes' own rate limit (shared, per process, none)",
      );
    const rows: FleetRow[] = [];
    const total = FLEET_SCENARIOS.length * seeds.length;
    let done = 0;
    for (const scenario of FLEET_SCENARIOS) {
      const cells: FleetCell[] = [];
      for (const seed of seeds) {
        const setup: FleetSetup = {
          limit: FLEET_LIMIT,
          per: 1000,
          rates: FLEET_RATES,
          mode: scenario.mode,
          burst: FLEET_LIMIT / 10,
          lease: 10,
          roundTrip: 1,
          providerBurst: scenario.strictProvider === true ? undefined : FLEET_LIMIT / 10,
          outage: scenario.outage,
          duration,
        };
        const run = await runFleet(policy, setup, seed);
        cells.push(cellOf(run, scenario, duration, seed));
        options.onProgress?.(++done, total, scenario.name, seed);
      }
      rows.push(Object.freeze({ scenario: scenario.name, cells: Object.freeze(cells) }));
    }
    return new FleetMatrixReport(policy.name, duration, seeds, rows);
  },
} as const;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x: number): string => `${(x * 100).toFixed(2)}%`;

/** The result of {@link FleetMatrix.run}: one row per fleet scenario, one cell per seed. */
export class FleetMatrixReport {
  /** @internal built by {@link FleetMatrix.run}. */
  constructor(
    /** The processes' policy's name (`''` when unnamed). */
    readonly policy: string,
    /** Simulated ms of arrivals per run. */
    readonly duration: number,
    /** The seeds every row ran. */
    readonly seeds: readonly number[],
    /** Rows in {@link FLEET_SCENARIOS} order. */
    readonly rows: readonly FleetRow[],
  ) {}

  /** The cell for `scenario` × `seed`. @throws RangeError when the matrix did not run it. */
  cell(scenario: string, seed: number): FleetCell {
    const found = this.rows
      .find((r) => r.scenario === scenario)
      ?.cells.find((c) => c.seed === seed);
    if (found === undefined)
      throw new RangeError(`the fleet matrix has no cell ${scenario} × seed ${seed}`);
    return found;
  }

  /** Every figure, shares to 4 decimals and rates to 1: stable for the same options. */
  toJSON(): { policy: string; duration: number; seeds: number[]; rows: FleetRow[] } {
    const r4 = (x: number): number => Math.round(x * 10_000) / 10_000;
    const r1 = (x: number): number => Math.round(x * 10) / 10;
    return {
      policy: this.policy,
      duration: this.duration,
      seeds: [...this.seeds],
      rows: this.rows.map((row) => ({
        scenario: row.scenario,
        cells: row.cells.map((c) => ({
          ...c,
          offered: r1(c.offered),
          sent: r1(c.sent),
          accepted: r1(c.accepted),
          limitUsed: r4(c.limitUsed),
          throttled: r4(c.throttled),
          limited: r4(c.limited),
          succeeded: r4(c.succeeded),
          roundTripsPerCall: c.roundTripsPerCall === null ? null : r4(c.roundTripsPerCall),
          backIn: c.backIn === null ? null : r1(c.backIn),
        })),
      })),
    };
  }

  /**
   * The table: per row the means over seeds of calls offered, requests sent and accepted per second,
   * the share of the limit used, 429s per request, calls refused by the fleet's own limit, calls that
   * succeeded and store round trips per call; degraded episodes, the slowest return to the shared
   * limit and the 429s in the 2 s after the store came back as the worst seed.
   */
  toString(): string {
    const header = [
      'scenario',
      'offered',
      'sent',
      'accepted',
      'of limit',
      '429s',
      'limited',
      'succeeded',
      'round trips per call',
      'degraded',
      'shared again after',
      '429s after return',
    ];
    const rows = this.rows.map(({ scenario, cells }) => {
      const trips = cells.map((c) => c.roundTripsPerCall);
      const back = cells.map((c) => c.backIn);
      const after = cells.map((c) => c.throttledAfterReturn);
      const afterRun =
        this.duration < FLEET_OUTAGE_DURATION && fleetScenario(scenario).outage !== undefined;
      return [
        scenario,
        mean(cells.map((c) => c.offered)).toFixed(0),
        mean(cells.map((c) => c.sent)).toFixed(0),
        mean(cells.map((c) => c.accepted)).toFixed(0),
        pct(mean(cells.map((c) => c.limitUsed))),
        pct(mean(cells.map((c) => c.throttled))),
        pct(mean(cells.map((c) => c.limited))),
        pct(mean(cells.map((c) => c.succeeded))),
        trips[0] === null ? '-' : mean(trips as number[]).toFixed(3),
        String(Math.max(...cells.map((c) => c.degradedEpisodes))),
        afterRun
          ? 'after the run'
          : back[0] === null && cells.every((c) => c.throttledAfterReturn === null)
            ? '-'
            : back.some((b) => b === null)
              ? 'never'
              : `${Math.round(Math.max(...(back as number[])))} ms`,
        afterRun
          ? 'after the run'
          : after[0] === null
            ? '-'
            : String(Math.max(...(after as number[]))),
      ];
    });
    const title = `Fleet matrix — 10 processes${this.policy ? ` running ${this.policy}` : ''}, ${FLEET_RATES.reduce((a, b) => a + b, 0)} calls/s offered unevenly (${FLEET_RATES.join(', ')}), a provider accepting ${FLEET_LIMIT}/s (offered, sent, accepted: per second): ${this.duration / 1000} s, seeds ${this.seeds.join(', ')}`;
    return textTable(title, header, rows, 1);
  }
}
