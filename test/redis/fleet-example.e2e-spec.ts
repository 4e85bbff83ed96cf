import { fleetLimit } from '../../docs/examples/rate-limits-fleet.js';
import { type TestRedis, startRedis } from '../support/redis-server.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

describe('docs/rate-limits.md: the fleet example against a real Redis', () => {
  it('two processes under the shared 500/s, 100 calls each over ~1 s: every call runs, about one Redis round trip per 10 calls', async () => {
    const fleet = [await fleetLimit(redis.url), await fleetLimit(redis.url)];
    try {
      const calls: Promise<{ ok: boolean }>[] = [];
      for (let i = 0; i < 100; i++) {
        for (const { openai } of fleet) calls.push(openai.tryRun(() => Promise.resolve(i)));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const results = await Promise.all(calls);
      expect(results.filter((r) => r.ok)).toHaveLength(200);
      // A lease of 10 asked when half is spent: 10 or 11 leases per 100 calls (a NOSCRIPT the first time).
      const roundTrips = fleet.map(({ store }) => store.roundTrips);
      for (const n of roundTrips) {
        expect(n).toBeGreaterThanOrEqual(10);
        expect(n).toBeLessThanOrEqual(12);
      }
      const states = fleet.map(({ openai }) => {
        const reading = openai.limiter()!.snapshot();
        return reading.kind === 'rate' ? reading.shared?.state : reading.kind;
      });
      expect(states).toEqual(['ready', 'ready']);
    } finally {
      await Promise.all(fleet.map(({ store }) => store.close()));
    }
  });
});
