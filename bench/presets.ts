/**
 * The success-path presets (and a retry) built from a given build of the core, by name: what
 * `before-after.ts` times against another build and `instructions.ts` counts under cachegrind.
 */
import type * as current from '@nresilience/nestjs/core';

/** A build of the core (this one, or another loaded from its `dist/core/index.js`). */
export type Core = typeof current;

/** The trivial async function every preset protects. */
export const work = async () => 1;

/** Each preset's call by name, its policies built from `core`; `raw` is the work called directly. */
export function presets(core: Core): Record<string, () => Promise<unknown>> {
  const { Backoff, Breaker, Resilience, RetryBudget } = core;
  const featuresOff = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });
  const breakerOnly = Resilience.default.with({
    attempts: 1,
    budget: RetryBudget.none,
    breaker: Breaker.default,
  });
  const listened = Resilience.default.with({ onEvent: () => undefined });
  const retrying = Resilience.default.with({ backoff: Backoff.none, budget: RetryBudget.none });
  let n = 0;
  const failsEveryOther = async () => {
    if ((n++ & 1) === 0) throw new Error('blip');
    return 1;
  };
  return {
    // The same call on both sides: its ns are the denominator of the '× raw' columns.
    raw: () => work(),
    featuresOff: () => featuresOff.run(work),
    default: () => Resilience.default.run(work),
    breakerOnly: () => breakerOnly.run(work),
    http: () => Resilience.http.run(work),
    'default + listener': () => listened.run(work),
    'default tryRun': () => Resilience.default.tryRun(work),
    'retry once (Backoff.none)': () => retrying.run(failsEveryOther),
  };
}
