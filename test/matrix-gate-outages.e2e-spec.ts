import { Resilience } from '../lib/core/index.js';
import { type MatrixReport, ScenarioMatrix } from '../lib/testing/index.js';
import {
  GATE_SEEDS,
  availabilityWithin,
  faultAttemptsCut,
  recoversWithin,
  violations,
} from './support/matrix-gate.js';

/**
 * The scenario matrix as a gate (issue 8 §2, DESIGN §3.6/§8.1), part 2: a dead dependency. Against
 * the same policy with its breaker off, same seeds (1–3), 500 calls/s, `Resilience.http` must cut what
 * a dead dependency receives (≥ 10× in outages, ≥ 5× while flapping), hand traffic back within 2 s
 * of recovery, cost at most 1 point of availability over an outage run (3 while flapping), and open
 * within 5 attempts on a cold start against a dead dependency.
 */
let matrix: MatrixReport;

beforeAll(async () => {
  matrix = await ScenarioMatrix.run(Resilience.http, {
    scenarios: ['outage-30s', 'outage-5m', 'flapping', 'cold-start-dead'],
    seeds: [...GATE_SEEDS],
    variants: ['policy', 'breakerOff'],
  });
}, 300_000);

describe('matrix gate: a dead dependency', () => {
  it.each(['outage-30s', 'outage-5m'])(
    '%s: ≤ 1/10 of the attempts, back within 2 s, availability ≥ breaker off − 1 point',
    (scenario) => {
      expect(
        violations(
          matrix,
          scenario,
          faultAttemptsCut(10),
          recoversWithin(2000),
          availabilityWithin(1),
        ),
      ).toEqual([]);
    },
  );

  it('flapping (30 s down / 30 s up): ≤ 1/5 of the attempts while down, availability ≥ breaker off − 3 points', () => {
    expect(violations(matrix, 'flapping', faultAttemptsCut(5), availabilityWithin(3))).toEqual([]);
  });

  it('cold start against a dead dependency: opens within 5 attempts, every seed', () => {
    expect(
      matrix.row('cold-start-dead', 'policy').cells.map((c) => [c.seed, c.attemptsBeforeFirstOpen]),
    ).toEqual(GATE_SEEDS.map((seed) => [seed, 5]));
  });

  it('is a real gate: without the breaker the dead dependency gets every call, and opens are counted', () => {
    for (const seed of GATE_SEEDS) {
      const off = matrix.cell('outage-30s', 'breakerOff', seed);
      expect(off.faultAttempts).toBeGreaterThan(30 * 500);
      expect(matrix.cell('outage-30s', 'policy', seed).breakerOpens).toBeGreaterThan(0);
    }
  });
});
