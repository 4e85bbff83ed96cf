/**
 * The success-path tasks whose heap bytes per call are measured and gated (`bench/allocation.ts`,
 * `bench/allocation-ceilings.json`): the raw awaited call first, then each preset around it.
 */
import type { BenchTask } from './harness.js';
import {
  Breaker,
  type Clock,
  Hedge,
  Limit,
  type Policy,
  RetryBudget,
  Resilience,
} from '@nresilience/nestjs/core';

/** The trivial async function every bench protects. */
export const work = async () => 1;

/** Every feature off: one attempt, no budget, no breaker, no deadline, no listener. */
export const featuresOff = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });
/** The breaker alone: one attempt, no budget, `Breaker.default`. */
export const breakerOnly = Resilience.default.with({
  attempts: 1,
  budget: RetryBudget.none,
  breaker: Breaker.default,
});

/** The executor's loop with nothing on: two attempts (so the loop runs), no budget, no breaker, no limit. */
export const loopOnly = Resilience.default.with({ attempts: 2, budget: RetryBudget.none });
/**
 * `loopOnly` plus a concurrency limit that always has a free slot. The slot is a counter; what it
 * adds over `loopOnly` is the attempt's timing (its start and duration, boxed numbers), which the
 * limiter's hold-time median needs and the breaker needs too: see `breakerFreeSlot`.
 */
export const freeSlot = loopOnly.with({ limit: Limit.concurrency(100_000) });
/** `breakerOnly` plus a free slot: no more than `breakerOnly` (attempts are timed for the breaker already). */
export const breakerFreeSlot = breakerOnly.with({ limit: Limit.concurrency(100_000) });

/**
 * `Resilience.default` with `Hedge.at(0.95)` on repeatable calls, its threshold armed from the start
 * (20 successes of 1 s in its window; the calls measured then keep it warm): a call of the trivial
 * work answers long before it, so every call arms the hedge timer once and clears it.
 * @param clock the policy's clock (default the system's)
 */
export function armedHedge(clock?: Clock): Policy {
  const policy = hedgedDefault(clock);
  const state = policy.hedger()!;
  const now = policy.options.clock.now();
  for (let i = 0; i < 20; i++) state.latency.add(now, 1000);
  return policy;
}

/** `Resilience.default` hedging repeatable calls at the live p95: a factory, its caller keeps the policy. */
function hedgedDefault(clock?: Clock): Policy {
  return Resilience.default.with({
    hedge: Hedge.at(0.95),
    repeatable: true,
    ...(clock === undefined ? {} : { clock }),
  });
}

/** Tasks in gate order; the names are the keys of the checked-in ceilings. */
export function allocationTasks(): BenchTask[] {
  const defaults = Resilience.default;
  const http = Resilience.http;
  const hedgedArmed = armedHedge();
  return [
    ['raw', () => work()],
    ['featuresOff', () => featuresOff.run(work)],
    ['default', () => defaults.run(work)],
    ['breakerOnly', () => breakerOnly.run(work)],
    ['http', () => http.run(work)],
    ['loopOnly', () => loopOnly.run(work)],
    ['freeSlot', () => freeSlot.run(work)],
    ['breakerFreeSlot', () => breakerFreeSlot.run(work)],
    ['hedgedArmed', () => hedgedArmed.run(work)],
  ];
}
