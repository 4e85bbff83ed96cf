import type { RateStore } from '../core/index.js';
import { PolicyConfigError } from '../core/index.js';
import { isPlainObject } from '../core/internal.js';
import type { RedisScriptClient } from '../redis/redis-rate-store.js';
import { isRedisUrl, REDIS_URL_RULE } from '../redis/redis-url.js';

/**
 * `redis` in `ResilienceModule.forRoot(...)`: the Redis that rate limits configured with
 * `limit.rate.shared: true` share their tokens through (`@nresilience/nestjs/redis`, which needs the
 * optional peer `ioredis`). Either a URL (the module opens the connection, waits up to `connectWait`
 * ms for it, and quits it when the application closes) or a client of yours (left open).
 */
export type ModuleRedisOption =
  | {
      /** `redis://[[user]:password@]host[:port][/db]`, `rediss://` for TLS. */
      url: string;
      /** Prefix of the buckets' keys. Default `nresilience:rate:`. */
      prefix?: string;
      /** ms to wait for the first connection at start-up, in [0, 60000]. Default 1000. */
      connectWait?: number;
    }
  | {
      /** An ioredis `Redis` (or anything with its `evalsha`/`eval`). */
      client: RedisScriptClient;
      /** Prefix of the buckets' keys. Default `nresilience:rate:`. */
      prefix?: string;
    };

/** Injection token of the module's {@link ModuleRateStore}. @internal */
export const RESILIENCE_RATE_STORE = 'RESILIENCE_RATE_STORE';

const SHAPE = 'must be { url, prefix?, connectWait? } or { client, prefix? }';

/**
 * Checks the `redis` module option. @internal
 * @returns the problems, each naming `redis.<field>`, the value and the rule
 */
export function redisOptionProblems(value: unknown): PolicyConfigError[] {
  if (value === undefined) return [];
  if (!isPlainObject(value)) return [new PolicyConfigError('redis', value, SHAPE)];
  const problems: PolicyConfigError[] = [];
  const allowed = 'url' in value ? ['url', 'prefix', 'connectWait'] : ['client', 'prefix'];
  for (const key of Object.keys(value))
    if (!allowed.includes(key))
      problems.push(
        new PolicyConfigError(`redis.${key}`, value[key], `is not an option: ${SHAPE}`),
      );
  if ('url' in value) {
    if (!isRedisUrl(value.url))
      problems.push(new PolicyConfigError('redis.url', value.url, REDIS_URL_RULE));
    const wait = value.connectWait;
    if (wait !== undefined && !(typeof wait === 'number' && wait >= 0 && wait <= 60_000))
      problems.push(
        new PolicyConfigError('redis.connectWait', wait, 'must be a duration in ms in [0, 60000]'),
      );
  } else if ('client' in value) {
    const client = value.client as Partial<RedisScriptClient> | null;
    if (typeof client?.evalsha !== 'function' || typeof client.eval !== 'function')
      problems.push(
        new PolicyConfigError(
          'redis.client',
          client,
          'must be a Redis client with evalsha() and eval() (an ioredis Redis)',
        ),
      );
  } else problems.push(new PolicyConfigError('redis', value, SHAPE));
  if (value.prefix !== undefined && typeof value.prefix !== 'string')
    problems.push(new PolicyConfigError('redis.prefix', value.prefix, 'must be a string'));
  return problems;
}

/**
 * The module's rate store: made from the `redis` option once, before the registry builds its
 * policies, and closed when the application closes (a connection it opened; a client given is left
 * open). @internal
 */
export class ModuleRateStore {
  private constructor(
    /** The store `limit.rate.shared: true` uses; `undefined` without a `redis` option. */
    readonly store: RateStore | undefined,
    private readonly close: (() => Promise<void>) | undefined,
  ) {}

  /**
   * Makes the store the checked `redis` option asks for (loading `@nresilience/nestjs/redis` only then).
   * @throws Error naming `ioredis` when the option is given and the optional peer is not installed
   */
  static async open(option: ModuleRedisOption | undefined): Promise<ModuleRateStore> {
    if (option === undefined) return new ModuleRateStore(undefined, undefined);
    let redis: typeof import('../redis/index.js');
    try {
      redis = await import('../redis/index.js');
    } catch (error) {
      throw new Error(
        'ResilienceModule: the redis option needs the optional peer ioredis (npm i ioredis)',
        { cause: error },
      );
    }
    if ('client' in option)
      return new ModuleRateStore(new redis.RedisRateStore(option.client, option), undefined);
    const store = await redis.connectRedisRateStore(option.url, option);
    return new ModuleRateStore(store, () => store.close());
  }

  /** Quits the connection the module opened. Called by Nest when the application closes. */
  async onApplicationShutdown(): Promise<void> {
    await this.close?.();
  }
}
