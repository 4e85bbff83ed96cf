/**
 * The success-path tasks whose heap bytes per call are measured and gated (`bench/allocation.ts`,
 * `bench/allocation-ceilings.json`): the raw awaited call first, then each preset around it.
 */
import type { BenchTask } from './harness.js';
import { Breaker, RetryBudget, Resilience } from '@nresilience/nestjs/core';

/** The trivial async function every bench protects. */
export const work = async () => 1;

/** Every feature off: one attempt, no budget, no breaker, no deadline, no listener. */
export const featuresOff = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });
/** The breaker alone: one attempt, no budget, `Breaker.default`. */
export const breakerOnly = Resilience.default.with({ attempts: 1, budget: RetryBudget.none, breaker: Breaker.default });

/** Tasks in gate order; the names are the keys of the checked-in ceilings. */
export function allocationTasks(): BenchTask[] {
  const defaults = Resilience.default;
  const http = Resilience.http;
  return [
    ['raw', () => work()],
    ['featuresOff', () => featuresOff.run(work)],
    ['default', () => defaults.run(work)],
    ['breakerOnly', () => breakerOnly.run(work)],
    ['http', () => http.run(work)],
  ];
}
