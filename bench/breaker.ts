/**
 * Success-path cost of circuit-breaker admission + recording (issue 3 §4, DESIGN §10): the same
 * single-attempt, no-budget policy with and without `Breaker.default`, against a raw awaited call and
 * against peers' breakers measured in the same run — cockatiel 3.2.1's consecutive breaker and
 * opossum 9 without its timeout. Run on demand: `npm run bench` (all) or, after `npm run build`,
 * `node dist-sample/bench/breaker.js`. Not part of `npm test`.
 *
 * Prints ns per call, the ratio to the raw call, and the breaker's own cost (with − without).
 */
import { ConsecutiveBreaker, circuitBreaker, handleAll } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { measure } from './harness.js';
import { Breaker, RetryBudget, Resilience } from '@nresilience/nestjs/core';

const work = async () => 1;

const withoutBreaker = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });
const withBreaker = Resilience.default.with({
  attempts: 1,
  budget: RetryBudget.none,
  breaker: Breaker.default,
});
const cockatiel = circuitBreaker(handleAll, {
  halfOpenAfter: 15_000,
  breaker: new ConsecutiveBreaker(5),
});
const opossum = new CircuitBreaker(work, { timeout: false });

const rows = await measure('Breaker success path', [
  ['raw await', () => work()],
  ['nresilience: attempts 1, no budget, no breaker', () => withoutBreaker.run(work)],
  ['nresilience: attempts 1, no budget, Breaker.default', () => withBreaker.run(work)],
  ['cockatiel 3.2.1: ConsecutiveBreaker(5), halfOpenAfter 15 s', () => cockatiel.execute(work)],
  ['opossum 9: breaker, timeout false', () => opossum.fire()],
]);

console.log(`breaker admission + recording: ${(rows[2]!.ns - rows[1]!.ns).toFixed(0)} ns/call`);
opossum.shutdown();
