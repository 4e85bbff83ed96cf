import { Resilience } from '../lib/core/policy/policy.js';
import { ChainMatrix } from '../lib/testing/simulation/chain-matrix.js';

/**
 * CI gate: the storm across layers. Three services that each retry three times in front of a dead
 * database: naive retry loops send it attempts³ = 27 requests per frontend call; the library's
 * defaults (a retry budget per hop, the nested-retry marker) keep it at most 1.3.
 */
describe('matrix gate: a 3-hop chain in front of a dead database', () => {
  it('naive retries amplify attempts³ (within 1 %), the defaults at most 1.3×', async () => {
    const matrix = await ChainMatrix.run(Resilience.default, {
      hops: 3,
      scenarios: ['database-down', 'healthy'],
      seeds: [1, 2],
    });
    for (const seed of [1, 2]) {
      expect(
        Math.abs(matrix.cell('database-down', 'naive', seed).bottomAmplification - 27) / 27,
      ).toBeLessThanOrEqual(0.01);
      expect(matrix.cell('database-down', 'policy', seed).bottomAmplification).toBeLessThanOrEqual(
        1.3,
      );
      // Healthy: 1.00 requests per call (a rare request past the database's 1 s timeout is retried).
      expect(matrix.cell('healthy', 'naive', seed).bottomAmplification).toBeCloseTo(1, 2);
      expect(matrix.cell('healthy', 'policy', seed).bottomAmplification).toBeCloseTo(1, 2);
      expect(matrix.cell('healthy', 'policy', seed).availability).toBe(1);
    }
  });
});
