import { type CallEvent, FakeClock, Resilience, RetryBudget } from '../../lib/core/index.js';

/** The changes `Resilience.default.with()` accepts. */
export type PolicyChanges = Parameters<typeof Resilience.default.with>[0];

/**
 * `Resilience.default` named `name` on a fake clock that jumps each backoff the moment it is
 * scheduled (random 0.5, no retry budget unless `changes` says otherwise), so retries happen without
 * waiting and `events` records every event with the exact delays chosen.
 */
export function jumpingPolicy(name: string, changes: PolicyChanges = {}) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({ name, clock, random: () => 0.5, budget: RetryBudget.none, ...changes })
    .withListener((event) => {
      events.push(event);
      if (event.kind === 'retrying') setImmediate(() => void clock.advance(event.delay));
    });
  return { clock, events, policy };
}
