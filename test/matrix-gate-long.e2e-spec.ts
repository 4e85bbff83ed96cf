import { Resilience } from '../lib/core/index.js';
import { ScenarioMatrix } from '../lib/testing/index.js';
import { GATE_SEEDS } from './support/matrix-gate.js';

/**
 * The scenario matrix as a gate (issue 8 §2), part 3: steady independent failures up to 40 % never
 * open `Resilience.http`'s breaker in 10 simulated minutes at 500 calls/s (about 320 000 attempts per
 * run), every seed. 40 % runs here: it is the hardest (both the share of failures among recent
 * outcomes and the runs of failures grow with the rate); lower rates run one minute in
 * matrix-gate-steady, and the breaker's own spec feeds it 10 minutes of outcomes at 10–40 %.
 */
describe('matrix gate: 10 minutes of steady failures', () => {
  it.each(['failing-40'])(
    '%s: 0 opens in 10 minutes, every seed',
    async (scenario) => {
      const matrix = await ScenarioMatrix.run(Resilience.http, {
        scenarios: [scenario],
        seeds: [...GATE_SEEDS],
        variants: ['policy'],
      });
      expect(matrix.row(scenario, 'policy').cells.map((c) => [c.seed, c.breakerOpens])).toEqual(
        GATE_SEEDS.map((seed) => [seed, 0]),
      );
      expect(matrix.cell(scenario, 'policy', 1).faultAttempts).toBeGreaterThan(300_000);
    },
    300_000,
  );
});
