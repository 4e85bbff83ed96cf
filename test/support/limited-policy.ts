import {
  Backoff,
  type CallEvent,
  FakeClock,
  type Limit,
  type Limiter,
  Resilience,
  RetryBudget,
} from '../../lib/core/index.js';

/**
 * A policy named `name` with `limit` on a fresh `FakeClock`, no budget and no backoff (so only the
 * limit decides), a fixed jitter source, and a listener recording its events; `extra` overrides any
 * option. `limiter` is the policy's limiter, typed as the spec expects it (`ConcurrencyLimiter`,
 * `RateLimiter`).
 */
export function limitedPolicy<L extends Limiter>(
  name: string,
  limit: Limit,
  extra: Parameters<typeof Resilience.default.with>[0] = {},
) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({
      name,
      clock,
      random: () => 0.5,
      budget: RetryBudget.none,
      backoff: Backoff.none,
      limit,
      ...extra,
    })
    .withListener((e) => events.push(e));
  return { clock, events, policy, limiter: policy.limiter() as L };
}
