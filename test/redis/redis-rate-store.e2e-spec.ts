import { once } from 'node:events';
import { Redis } from 'ioredis';
import { Limit, Resilience, RetryBudget, type RateTake } from '../../lib/core/index.js';
import {
  RedisRateStore,
  RedisStoreUnavailableError,
  STORE_CLIENT_OPTIONS,
  connectRedisRateStore,
} from '../../lib/redis/index.js';
import { type TestRedis, startRedis } from '../support/redis-server.js';

// Against a real Redis (a redis-server started on a free loopback port, or REDIS_URL).
let redis: TestRedis;
const clients: Redis[] = [];

/** A client made as connectRedisRateStore makes it, connected. */
async function client(url = redis.url): Promise<Redis> {
  const made = new Redis(url, { ...STORE_CLIENT_OPTIONS });
  made.on('error', () => undefined);
  clients.push(made);
  if (made.status !== 'ready') await once(made, 'ready');
  return made;
}

let keys = 0;
/** A key no other test uses (an external Redis keeps what earlier runs left). */
function freshKey(): string {
  return `test-${process.pid}-${Date.now()}-${++keys}`;
}

function take(key: string, overrides: Partial<RateTake> = {}): RateTake {
  return { key, count: 10, limit: 100, per: 1000, burst: 10, horizon: 1000, ...overrides };
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => (c.status === 'ready' ? c.quit() : c.disconnect())));
  await redis.stop();
});

describe('RedisRateStore against a real Redis', () => {
  it('grants leases atomically across clients: 100/s with burst 10 and a 1 s horizon grants exactly 11 leases of 40 asked at once', async () => {
    const key = freshKey();
    const stores = await Promise.all(
      [0, 1, 2, 3].map(async () => new RedisRateStore(await client())),
    );
    const started = performance.now();
    const grants = await Promise.all(
      Array.from({ length: 40 }, (_, i) => stores[i % 4]!.take(take(key))),
    );
    const elapsed = performance.now() - started;
    const granted = grants.filter((g) => g.granted > 0);
    // burst 10 now + 100 tokens within the 1 s horizon = 110 tokens = 11 leases of 10; the
    // asks take a few ms, far less than the 100 ms a twelfth lease would need.
    // (A machine so loaded that the asks spread over more than 100 ms lets one more lease fit per 100 ms.)
    expect(granted.length).toBeGreaterThanOrEqual(11);
    expect(granted.length).toBeLessThanOrEqual(11 + Math.floor(elapsed / 100));
    expect(granted.every((g) => g.granted === 10)).toBe(true);
    // Each lease is placed after the previous: valid 0, 100, 200, … 1000 ms after the first was
    // granted (less the time between that grant and its own, at most the whole exchange).
    const validIn = granted.map((g) => g.validIn).sort((a, b) => a - b);
    validIn.forEach((ms, i) => {
      expect(ms).toBeLessThanOrEqual(i * 100 + 0.001);
      expect(ms).toBeGreaterThanOrEqual(i * 100 - elapsed);
    });
    // A refused lease says when one may fit: a lease's worth (100 ms) past the horizon, less the
    // time since the first grant.
    const refused = grants.filter((g) => g.granted === 0);
    expect(refused).toHaveLength(40 - granted.length);
    for (const g of refused) {
      expect(g.retryAfter).toBeLessThanOrEqual(100.001);
      expect(g.retryAfter).toBeGreaterThanOrEqual(100 - elapsed);
    }
  });

  it('keeps one number per key, expiring when the bucket would be full again', async () => {
    const key = freshKey();
    const c = await client();
    const store = new RedisRateStore(c, { prefix: 'p:' });
    await store.take(take(key, { count: 5, limit: 10, burst: 5 }));
    // tat = now + 5 × 100 ms: the key lives about 500 ms.
    const ttl = await c.pttl(`p:${key}`);
    expect(ttl).toBeGreaterThan(400);
    expect(ttl).toBeLessThanOrEqual(502);
    expect(Number(await c.get(`p:${key}`))).toBeGreaterThan(0);
  });

  it('is one round trip per lease, two when Redis has to be given the script again (SCRIPT FLUSH)', async () => {
    const c = await client();
    const store = new RedisRateStore(c);
    await c.script('FLUSH');
    const key = freshKey();
    await store.take(take(key));
    expect(store.roundTrips).toBe(2);
    await store.take(take(key));
    await store.take(take(key));
    expect(store.roundTrips).toBe(4);
  });

  it('rejects at once, without sending, while the client is reconnecting; a client given is not closed', async () => {
    if (!redis.owned) return expect(redis.owned).toBe(false);
    const own = await startRedis({ own: true });
    try {
      const c = await client(own.url);
      const store = new RedisRateStore(c);
      expect(store.state()).toBe('ready');
      await own.kill();
      await waitFor(() => store.state() !== 'ready');
      // Refused before anything is sent: the limiter's storeTimeout (250 ms) is not waited out.
      const started = performance.now();
      await expect(store.take(take(freshKey()))).rejects.toBeInstanceOf(RedisStoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(200);
      await own.restart();
      await waitFor(() => store.state() === 'ready', 3000);
      expect((await store.take(take(freshKey()))).granted).toBe(10);
      await store.close();
      expect(c.status).toBe('ready');
    } finally {
      await own.stop();
    }
  });

  it('connectRedisRateStore: a Redis that is not there is waited for connectWait only, then every take rejects fast', async () => {
    const store = await connectRedisRateStore('redis://127.0.0.1:1', { connectWait: 100 });
    try {
      expect(store.state()).not.toBe('ready');
      const started = performance.now();
      await expect(store.take(take(freshKey()))).rejects.toBeInstanceOf(RedisStoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(200);
    } finally {
      await store.close();
    }
  });

  it('Limit.rate through the store: 4 policies sharing 50/s (burst 10) need a full second for their 60th call, not the 0.1 s four separate limits would', async () => {
    const stores = await Promise.all(
      [0, 1, 2, 3].map(() => connectRedisRateStore(redis.url, { connectWait: 2000 })),
    );
    try {
      const key = freshKey();
      const policies = stores.map((store) =>
        Resilience.default.with({
          name: 'shared-50',
          attempts: 1,
          budget: RetryBudget.none,
          limit: Limit.rate({ limit: 50, per: 1000, burst: 10, store, key }),
        }),
      );
      let granted = 0;
      let sixtiethAt = Number.POSITIVE_INFINITY;
      const started = performance.now();
      const work = () => {
        if (++granted === 60) sixtiethAt = performance.now() - started;
        return Promise.resolve();
      };
      // Every 2 ms each policy offers a call (4 × 500/s) until 60 have run; refusals end after the
      // guarded pause. A slow machine only offers fewer calls, so it can make the 60th later, never
      // earlier: the lower bound below holds under any load.
      const calls: Promise<unknown>[] = [];
      while (granted < 60 && performance.now() - started < 10_000) {
        for (const policy of policies) calls.push(policy.tryRun(work).then(() => undefined));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await Promise.all(calls);
      // A lease is granted only when all its tokens conform to the shared GCRA (on Redis's clock), so
      // by time t at most burst 10 + 50·t calls ran: the 60th needs t ≥ 1 s (100 ms of slack for the
      // two clocks' reading points). Four separate 50/s limits would reach it at 0.1 s (4 × 10 + 200/s).
      expect(sixtiethAt).toBeGreaterThanOrEqual(900);
      expect(sixtiethAt).toBeLessThan(10_000);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});

async function waitFor(condition: () => boolean, ms = 2000): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > ms) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
