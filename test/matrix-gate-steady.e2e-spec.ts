import { Breaker, Resilience } from '../lib/core/index.js';
import { type MatrixReport, ScenarioMatrix } from '../lib/testing/index.js';
import { GATE_SEEDS, availabilityWithin, neverOpens, violations } from './support/matrix-gate.js';

/**
 * The scenario matrix as a gate (issue 8 §2, DESIGN §3.6/§8.1), part 1: where the dependency still
 * answers at least half its requests, `Resilience.http` must give what the same policy gives with its
 * breaker off (≥ breaker-off − 1 point, every seed), and steady independent failures up to 40 % must
 * never open it. 500 calls/s, seeds 1–3; the steady scenarios (`failing-*`, overload) run one
 * simulated minute here (the 10-minute no-open run is in matrix-gate-long).
 */
const STEADY = ['failing-1', 'failing-10', 'failing-30', 'failing-40', 'failing-50', 'overload'];
const WINDOWED = ['healthy', 'brownout', 'slow'];
const SCENARIOS = [...WINDOWED, ...STEADY];
let matrix: MatrixReport;
let windowed: MatrixReport;

beforeAll(async () => {
  const options = { seeds: [...GATE_SEEDS], variants: ['policy', 'breakerOff'] as const };
  // The steady scenarios are the same every minute: one simulated minute each keeps the gate quick.
  matrix = await ScenarioMatrix.run(Resilience.http, {
    ...options,
    scenarios: STEADY,
    maximumDuration: 60_000,
  });
  windowed = await ScenarioMatrix.run(Resilience.http, { ...options, scenarios: WINDOWED });
}, 300_000);

describe('matrix gate: a dependency that still serves half its requests', () => {
  it.each(SCENARIOS)('%s: availability ≥ breaker off − 1 point, every seed', (scenario) => {
    expect(
      violations(STEADY.includes(scenario) ? matrix : windowed, scenario, availabilityWithin(1)),
    ).toEqual([]);
  });

  it.each(['healthy', 'slow'])('%s: the breaker never opens', (scenario) => {
    expect(violations(windowed, scenario, neverOpens)).toEqual([]);
  });

  it.each(['failing-1', 'failing-10', 'failing-30', 'failing-40'])(
    '%s: the breaker never opens',
    (scenario) => {
      expect(violations(matrix, scenario, neverOpens)).toEqual([]);
    },
  );

  it('overload (1.5× capacity): load multiplier ≤ 1.1, every seed', () => {
    expect(
      matrix.row('overload', 'policy').cells.map((c) => [c.seed, c.loadMultiplier <= 1.1]),
    ).toEqual(GATE_SEEDS.map((seed) => [seed, true]));
  });

  it('is a real gate: the seeds’ breaker (5 in a row, 15 s doubling, slow trip) fails it at 30 % failures', async () => {
    const seedsBreaker = Breaker.with({
      failureRateFloor: 0,
      errorRateMultiple: 5,
      slowCallMultiple: 3,
      breakDuration: 15_000,
      maximumBreak: 120_000,
    });
    const old = await ScenarioMatrix.run(Resilience.http.with({ breaker: seedsBreaker }), {
      scenarios: ['failing-30'],
      seeds: [1],
      variants: ['policy'],
      maximumDuration: 60_000,
    });
    const cell = old.cell('failing-30', 'policy', 1);
    expect(cell.breakerOpens).toBeGreaterThan(0);
    expect(cell.availability).toBeLessThan(
      matrix.cell('failing-30', 'breakerOff', 1).availability - 0.01,
    );
  });
});
