// docs/rate-limits.md; test/redis/fleet-example.e2e-spec.ts runs it against a real Redis.
// #region fleet
import { Limit, type RateStore, Resilience } from '../../lib/core/index.js';
import { connectRedisRateStore } from '../../lib/redis/index.js';

/** Every process of the fleet runs this once: together they make at most 500 calls a second. */
export async function fleetLimit(url: string) {
  const store = await connectRedisRateStore(url); // e.g. process.env.REDIS_URL
  return { openai: openaiPolicy(store), store };
}

/** The provider's policy, built once per process, its rate limit shared through the store. */
function openaiPolicy(store: RateStore) {
  return Resilience.default.with({
    name: 'openai',
    limit: Limit.rate({ limit: 500, per: 1000, store, expectedInstances: 10 }),
  });
}
// #endregion fleet
