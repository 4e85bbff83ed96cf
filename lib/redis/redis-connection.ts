import { Redis, type RedisOptions } from 'ioredis';
import { SystemClock } from '../core/index.js';
import { RedisRateStore, type RedisRateStoreOptions } from './redis-rate-store.js';
import { isRedisUrl, REDIS_URL_RULE } from './redis-url.js';

/** Options of {@link connectRedisRateStore}. */
export interface RedisConnectOptions extends RedisRateStoreOptions {
  /**
   * How long to wait for the first connection before the store is returned anyway, ms in [0, 60000].
   * Default 1000. A Redis that is not there by then is not waited for: calls run on the local share
   * (`expectedInstances`) until it answers.
   */
  readonly connectWait?: number;
  /** More ioredis options (TLS, username, password, `db`, …); the store's own four are kept. */
  readonly redis?: RedisOptions;
}

/** The longest wait between two reconnection attempts (ms): Redis back is seen within about this. */
export const RECONNECT_INTERVAL_MS = 250;

/**
 * The client options the store needs: a request is never queued while disconnected (it fails at
 * once and the limiter runs on its local share), a request in flight when the connection drops fails
 * at once, and a lost connection is retried every {@link RECONNECT_INTERVAL_MS} ms at most.
 */
export const STORE_CLIENT_OPTIONS = Object.freeze({
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  retryStrategy: (times: number) => Math.min(times * 50, RECONNECT_INTERVAL_MS),
}) satisfies RedisOptions;

/** A store on a connection it opened itself: {@link RedisRateStore.close} quits it. */
class ConnectedRedisRateStore extends RedisRateStore {
  override async close(): Promise<void> {
    const client = this.client as Redis;
    // A connection that is not up is dropped (quit would wait for it to come back).
    if (client.status !== 'ready') return client.disconnect();
    await client.quit().then(
      () => undefined,
      () => client.disconnect(),
    );
  }
}

/**
 * Opens an ioredis connection to `url` (`redis://[[user]:password@]host[:port][/db]`, `rediss://` for
 * TLS) and returns a {@link RedisRateStore} on it, once connected or after `connectWait` ms.
 * Connection errors are not thrown and never unhandled: the limiter sees the store fail and degrades,
 * and the client keeps reconnecting. `close()` on the store quits the connection.
 * @throws TypeError for a `url` that is not a Redis URL as above (another scheme, no host, a path
 *   that is not `/<db>`), or a bad `connectWait`
 */
export async function connectRedisRateStore(
  url: string,
  options: RedisConnectOptions = {},
): Promise<RedisRateStore> {
  if (!isRedisUrl(url)) throw new TypeError(`url: ${String(url)} is invalid: ${REDIS_URL_RULE}`);
  const wait = options.connectWait ?? 1000;
  if (!(typeof wait === 'number' && wait >= 0 && wait <= 60_000))
    throw new TypeError(
      `connectWait: ${String(wait)} is invalid: must be a duration in ms in [0, 60000]`,
    );
  const client = new Redis(url, { ...options.redis, ...STORE_CLIENT_OPTIONS });
  // A Redis that is down is reported by the limiter (degraded event, log line), not by the client.
  client.on('error', () => undefined);
  const store = new ConnectedRedisRateStore(client, options);
  if (client.status !== 'ready') await readyOrAfter(client, wait);
  return store;
}

/** Resolves when `client` is ready or after `ms`, whichever comes first (the listener and the timer removed). */
function readyOrAfter(client: Redis, ms: number): Promise<void> {
  const clock = SystemClock.instance;
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clock.clearTimer(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = clock.setTimer(ms, done, true);
    client.once('ready', done);
  });
}
