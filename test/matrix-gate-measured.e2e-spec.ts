import { Resilience } from '../lib/core/index.js';
import {
  MATRIX_SCENARIOS,
  type MatrixCell,
  type MatrixReport,
  ScenarioMatrix,
} from '../lib/testing/index.js';

/**
 * The scenario matrix as the measured attempt ceiling's gate (DESIGN §3.7, §8.1): `Resilience.http`
 * (which has `AttemptCeiling.default`) beside the same policy without it, every scenario, seeds 1–2,
 * 500 calls/s, each scenario capped at two simulated minutes (the steady ones are the same every
 * minute). The ceiling must:
 * - cost no availability anywhere: ≥ ceiling off − 0.5 point, every scenario and seed;
 * - cut the time a hung request holds a call: `hanging` (1 % of requests never answered) p99 from
 *   the 30 s deadline to under 1 s, availability back to ≥ 99.9 %;
 * - cut a latency tail it can see (`latency-tail`, 3 % of requests 20× slower) at least 2× at ≤ 5 %
 *   extra attempts;
 * - never lengthen a call where the dependency is slow for everyone (`slow`, `brownout`): p99 within
 *   2 % of the ceiling off's.
 */
const SEEDS = [1, 2];
let matrix: MatrixReport;

beforeAll(async () => {
  matrix = await ScenarioMatrix.run(Resilience.http, {
    seeds: SEEDS,
    variants: ['ceilingOff', 'policy'],
    maximumDuration: 120_000,
  });
}, 900_000);

/** Each seed's [ceiling off, ceiling on] cells of `scenario`. */
const pairs = (scenario: string): [MatrixCell, MatrixCell][] =>
  SEEDS.map((seed) => [
    matrix.cell(scenario, 'ceilingOff', seed),
    matrix.cell(scenario, 'policy', seed),
  ]);

describe('matrix gate: the measured attempt ceiling', () => {
  it.each(MATRIX_SCENARIOS.map((s) => s.name))(
    '%s: availability ≥ ceiling off − 0.5 point, every seed',
    (scenario) => {
      for (const [off, on] of pairs(scenario))
        expect({ seed: on.seed, kept: on.availability >= off.availability - 0.005 }).toEqual({
          seed: on.seed,
          kept: true,
        });
    },
  );

  it('hanging: a hung request holds its call < 1 s instead of the 30 s deadline (p99), availability ≥ 99.9 %', () => {
    for (const [off, on] of pairs('hanging')) {
      expect({ seed: on.seed, off: off.p99 >= 29_000, on: on.p99 < 1_000 }).toEqual({
        seed: on.seed,
        off: true,
        on: true,
      });
      expect(on.availability).toBeGreaterThanOrEqual(0.999);
    }
  });

  it('latency-tail: p99 at least 2× lower at ≤ 5 % extra attempts', () => {
    for (const [off, on] of pairs('latency-tail'))
      expect({
        seed: on.seed,
        cut: off.p99 / on.p99 >= 2,
        extra: on.loadMultiplier - off.loadMultiplier <= 0.05,
      }).toEqual({ seed: on.seed, cut: true, extra: true });
  });

  it.each(['slow', 'brownout'])(
    '%s: slow for everyone, the ceiling never lengthens a call (p99 within 2 %)',
    (scenario) => {
      for (const [off, on] of pairs(scenario))
        expect({ seed: on.seed, p99: on.p99 <= off.p99 * 1.02 }).toEqual({
          seed: on.seed,
          p99: true,
        });
    },
  );
});
