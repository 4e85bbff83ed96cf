import { createHash } from 'node:crypto';
import type { RateGrant, RateStore, RateTake } from '../core/index.js';
import { LEASE_SCRIPT } from './lease-script.js';

/**
 * What the store needs of a Redis client: `evalsha` and `eval` (ioredis' signatures), and its
 * connection `status` when it has one (ioredis: `wait`, `connecting`, `connect`, `ready`,
 * `reconnecting`, `close`, `end`). An ioredis `Redis` instance is one.
 */
export interface RedisScriptClient {
  /** The connection state; the store sends nothing while it says the connection was lost. */
  readonly status?: string;
  /** Runs a script Redis already holds by its SHA-1; rejects with `NOSCRIPT …` when it does not. */
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** Runs (and caches) a script. */
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Options of a {@link RedisRateStore}. */
export interface RedisRateStoreOptions {
  /** Prefix of every bucket's Redis key (the key is `prefix + limit key`). Default `nresilience:rate:`. */
  readonly prefix?: string;
}

/** The error of a request the store did not send because the client has lost its connection. */
export class RedisStoreUnavailableError extends Error {
  /** @param status the client's connection status (`reconnecting`, `close`, `end`) */
  constructor(
    /** The client's connection status when the request was refused. */
    readonly status: string,
  ) {
    super(`the Redis rate store's connection is ${status}`);
    this.name = 'RedisStoreUnavailableError';
  }
}

const DEFAULT_PREFIX = 'nresilience:rate:';
const SCRIPT_SHA = createHash('sha1').update(LEASE_SCRIPT).digest('hex');
/** Statuses before a client's first connection, when a command is queued by the client, not lost. */
const FIRST_CONNECT = new Set(['wait', 'connecting', 'connect']);

/**
 * A {@link RateStore} on Redis: every process of a fleet given a store on the same Redis shares one
 * GCRA bucket per key. A lease is one round trip: one atomic script (`EVALSHA`, or `EVAL` the first
 * time a Redis sees it) that reserves `count` tokens after those already granted, on Redis's clock.
 *
 * The store never queues a request while the client is reconnecting: it rejects at once (the limiter
 * then runs on its local share), because a lease queued through an outage would be granted, and lost,
 * when Redis returns. Before the client's first connection a request is sent (the client queues it).
 */
export class RedisRateStore implements RateStore {
  /** `redis`, the store's name in health and logs. */
  readonly name = 'redis';
  /** Requests sent to Redis (each one round trip; a script Redis had to be given again counts two). */
  roundTrips = 0;
  private readonly prefix: string;
  private connected = false;

  /**
   * @param client a connected (or connecting) Redis client, ioredis' `Redis` or anything with its
   *   `evalsha`/`eval`; the store does not close it
   * @param options the key prefix
   * @throws TypeError when `client` has no `evalsha`/`eval`, or `prefix` is not a string
   */
  constructor(
    /** The client the store sends its script through. */
    readonly client: RedisScriptClient,
    options: RedisRateStoreOptions = {},
  ) {
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof client.evalsha !== 'function' ||
      typeof client.eval !== 'function'
    )
      throw new TypeError(
        'client: must be a Redis client with evalsha() and eval() (an ioredis Redis instance)',
      );
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== 'string')
      throw new TypeError(`prefix: ${String(prefix)} is invalid: must be a string`);
    this.prefix = prefix;
  }

  /** The client's connection status (`ready`, `reconnecting`, …), `ready` for a client that has none. */
  state(): string {
    return this.client.status ?? 'ready';
  }

  /**
   * Reserves a lease of `request.count` tokens of the bucket `request.key`.
   * @throws (rejects) RedisStoreUnavailableError while the client has lost its connection; the
   *   client's error when Redis fails; Error for a reply of another shape
   */
  async take(request: RateTake): Promise<RateGrant> {
    const status = this.client.status;
    if (status === undefined || status === 'ready') this.connected = true;
    else if (this.connected || !FIRST_CONNECT.has(status))
      throw new RedisStoreUnavailableError(status);
    const key = this.prefix + request.key;
    const args = [
      request.count,
      String(request.per / request.limit),
      request.burst,
      String(request.horizon),
    ];
    this.roundTrips++;
    let reply: unknown;
    try {
      reply = await this.client.evalsha(SCRIPT_SHA, 1, key, ...args);
    } catch (error) {
      if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw error;
      // A Redis that has not seen the script yet (or was restarted): send it whole, it is cached.
      this.roundTrips++;
      reply = await this.client.eval(LEASE_SCRIPT, 1, key, ...args);
    }
    return grantOf(reply);
  }

  /** Lets go of the connection when the store made it ({@link connectRedisRateStore}); a client given is left open. */
  async close(): Promise<void> {}
}

/** Reads the script's `{ granted, validIn, retryAfter }`. */
function grantOf(reply: unknown): RateGrant {
  if (Array.isArray(reply) && reply.length === 3) {
    const [granted, validIn, retryAfter] = reply.map(Number) as [number, number, number];
    if (granted >= 0 && validIn >= 0 && retryAfter >= 0) return { granted, validIn, retryAfter };
  }
  throw new Error(`the Redis rate store's script answered ${JSON.stringify(reply)}`);
}
