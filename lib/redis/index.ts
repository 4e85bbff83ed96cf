/**
 * `@nresilience/nestjs/redis`: the Redis store of rate limits shared by a fleet (DESIGN §3.8). Give
 * it to `Limit.rate({ limit, per, store })`, or to `ResilienceModule.forRoot({ redis: { url } })`
 * for `limit.rate.shared: true` in config. Needs `ioredis` (an optional peer dependency).
 *
 * @module @nresilience/nestjs/redis
 */
export type { RateGrant, RateStore, RateTake } from '../core/index.js';
export {
  type RedisScriptClient,
  type RedisRateStoreOptions,
  RedisRateStore,
  RedisStoreUnavailableError,
} from './redis-rate-store.js';
export {
  type RedisConnectOptions,
  RECONNECT_INTERVAL_MS,
  STORE_CLIENT_OPTIONS,
  connectRedisRateStore,
} from './redis-connection.js';
export { LEASE_SCRIPT } from './lease-script.js';
