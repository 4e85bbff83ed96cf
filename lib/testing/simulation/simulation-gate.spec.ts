import { Resilience, RetryBudget } from '../../core/index.js';
import { Dependency } from './dependency.js';
import { Load } from './load.js';
import { Simulate } from './simulate.js';

/**
 * CI gate (issue 4): in a brownout, the default policy must not turn retries into a storm. A small
 * version of the seed scenario: 200 calls/s for 30 s, the dependency 8× slower from 5 s to 25 s
 * (40 workers, a 150 ms server-side timeout: the seed scenario's capacity scaled to the load).
 */
const brownout = Dependency.healthy({
  p50: 20,
  p99: 200,
  capacity: { concurrency: 40, timeout: 150 },
}).brownout({ after: 5000, slower: 8, lasting: 20_000 });
const scenario = (budget?: RetryBudget) =>
  Simulate.policy(budget === undefined ? Resilience.default : Resilience.default.with({ budget }))
    .against(brownout)
    .under(Load.constant({ perSecond: 200 }))
    .for(30_000)
    .run(42);

describe('simulation gate: brownout', () => {
  it('keeps the default policy at a load multiplier <= 1.2', async () => {
    const report = await scenario();
    expect(report.loadMultiplier).toBeLessThanOrEqual(1.2);
  });

  it('is a real gate: without the retry budget the same scenario exceeds 1.2', async () => {
    const report = await scenario(RetryBudget.none);
    expect(report.loadMultiplier).toBeGreaterThan(1.2);
  });
});
