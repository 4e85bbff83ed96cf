import { Hedge, Resilience } from '../lib/core/index.js';
import {
  MATRIX_RATE,
  type MatrixCell,
  type MatrixReport,
  ScenarioMatrix,
  matrixScenario,
} from '../lib/testing/index.js';

/**
 * The scenario matrix as hedging's gate (DESIGN §3.8, §8.1): `Resilience.http` without its attempt
 * ceiling (which cuts the same tail: its own gate is matrix-gate-measured), with and without
 * `hedge: Hedge.at(0.95)` (every call repeatable), 500 calls/s. In the latency-tail scenario (3 % of
 * requests 20× slower, nothing fails) hedging must cut p99 at least 3× for at most 10 % extra
 * attempts; in the healthy row it sends at most 1.1 × (1 − q) extra attempts per call; where it
 * cannot help — brownout, overload, outage — it adds at most 2 % of the calls as attempts inside
 * the fault windows and costs at most 0.5 point of availability.
 */
const SEEDS = [1, 2];
const Q = 0.95;
const HTTP = Resilience.http.with({ attemptCeiling: undefined });
let matrix: MatrixReport;

beforeAll(async () => {
  matrix = await ScenarioMatrix.run(HTTP, {
    seeds: SEEDS,
    variants: ['policy', 'hedged'],
    scenarios: ['healthy', 'brownout', 'overload', 'outage-30s', 'latency-tail'],
  });
}, 300_000);

/** Each seed's [no hedging, hedged] cells of `scenario`. */
const pairs = (scenario: string): [MatrixCell, MatrixCell][] =>
  SEEDS.map((seed) => [
    matrix.cell(scenario, 'policy', seed),
    matrix.cell(scenario, 'hedged', seed),
  ]);

/** Calls offered inside the scenario's fault windows. */
function faultCalls(scenario: string): number {
  return matrixScenario(scenario).faults.reduce(
    (sum, f) => sum + ((f.end - f.start) / 1000) * MATRIX_RATE,
    0,
  );
}

describe('matrix gate: hedging', () => {
  it('latency-tail: p99 falls at least 3× at most 10 % extra attempts, every seed', () => {
    for (const [off, on] of pairs('latency-tail')) {
      expect({
        seed: on.seed,
        p99Cut: off.p99 / on.p99 >= 3,
        extra: on.loadMultiplier - off.loadMultiplier <= 0.1,
      }).toEqual({ seed: on.seed, p99Cut: true, extra: true });
      expect(on.availability).toBe(1);
    }
  });

  it('healthy: at most 1.1 × (1 − q) extra attempts per call, every seed', () => {
    for (const [off, on] of pairs('healthy')) {
      expect({
        seed: on.seed,
        extra: on.loadMultiplier - off.loadMultiplier <= 1.1 * (1 - Q),
        hedged: on.hedgedShare <= 1.1 * (1 - Q),
      }).toEqual({ seed: on.seed, extra: true, hedged: true });
    }
  });

  it.each(['brownout', 'overload', 'outage-30s'])(
    '%s: ≤ 2 %% of the calls as extra attempts in the fault, ≤ 0.5 point of availability',
    (scenario) => {
      const calls = faultCalls(scenario);
      for (const [off, on] of pairs(scenario)) {
        const extra = (on.faultAttempts! - off.faultAttempts!) / calls;
        expect({
          seed: on.seed,
          load: extra <= 0.02,
          availability: on.availability >= off.availability - 0.005,
        }).toEqual({ seed: on.seed, load: true, availability: true });
      }
    },
  );

  it('brownout and overload: the whole run’s load grows at most 2 %', () => {
    for (const scenario of ['brownout', 'overload']) {
      for (const [off, on] of pairs(scenario))
        expect({
          scenario,
          seed: on.seed,
          ok: on.loadMultiplier <= off.loadMultiplier * 1.02,
        }).toEqual({ scenario, seed: on.seed, ok: true });
    }
  });

  it('is a real gate: hedging at the median instead fails the healthy row', async () => {
    const loose = await ScenarioMatrix.run(HTTP.with({ hedge: Hedge.at(0.5) }), {
      seeds: [1],
      variants: ['policy', 'hedged'],
      scenarios: ['healthy'],
    });
    const extra =
      loose.cell('healthy', 'hedged', 1).loadMultiplier -
      matrix.cell('healthy', 'policy', 1).loadMultiplier;
    expect(extra).toBeGreaterThan(1.1 * (1 - Q));
  });
});
