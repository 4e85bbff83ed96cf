/**
 * Simulator speed (issue 4, DESIGN §8 and §10): wall time of the seed scenario — 500 calls/s for
 * 5 simulated minutes (150,000 calls), the dependency 8× slower from 0:30 for one minute — and the
 * ratio of simulated time to wall time (goal >= 150×). Run on demand: `npm run bench`.
 *
 * One warm-up run (60 s simulated) first, so the JIT's first compilation is not billed to the
 * measured runs; then the default policy and the same policy without a retry budget.
 */
import { Resilience, RetryBudget } from '@nresilience/nestjs/core';
import { Dependency, Load, Simulate } from '@nresilience/nestjs/testing';
import { smoke } from './harness.js';

// The CI smoke (BENCH_SMOKE=1) simulates 2 s instead of 5 min.
const DURATION = smoke ? 2_000 : 300_000;
const dependency = Dependency.healthy({
  p50: 20,
  p99: 200,
  capacity: { concurrency: 100, timeout: 150 },
}).brownout({
  after: 30_000,
  slower: 8,
  lasting: 60_000,
});
const load = Load.constant({ perSecond: 500 });

await Simulate.policy(Resilience.default)
  .against(dependency)
  .under(load)
  .for(smoke ? 1_000 : 60_000)
  .run(1);

const rows = [];
for (const [name, policy] of [
  ['Resilience.default (budget on)', Resilience.default],
  ['RetryBudget.none (budget off)', Resilience.default.with({ budget: RetryBudget.none })],
] as const) {
  const start = performance.now();
  const report = await Simulate.policy(policy)
    .against(dependency)
    .under(load)
    .for(DURATION)
    .run(42);
  const wall = performance.now() - start;
  rows.push({
    policy: name,
    calls: report.calls,
    'wall ms': Math.round(wall),
    'simulated / wall': `${Math.round(DURATION / wall)}×`,
    availability: `${(report.availability * 100).toFixed(2)}%`,
    'worst second': `${report.amplification.toFixed(2)}×`,
  });
}
console.log(
  '\nSimulation: seed scenario (500 calls/s, 5 min, 8× slower 0:30–1:30), goal >= 150× simulated/wall',
);
console.table(rows);
