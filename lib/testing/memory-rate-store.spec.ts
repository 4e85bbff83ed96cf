import { describe, expect, it } from '@jest/globals';
import {
  type CallEvent,
  FakeClock,
  Limit,
  type RateLimiter,
  Resilience,
  RetryBudget,
} from '../core/index.js';
import { MemoryRateStore } from './memory-rate-store.js';

/** `n` processes' policies named `name` sharing `store` (one clock: the processes' clocks agree). */
function fleet(
  n: number,
  store: MemoryRateStore,
  clock: FakeClock,
  rate: Partial<Parameters<typeof Limit.rate>[0]> = {},
) {
  const events: CallEvent[][] = [];
  const policies = Array.from({ length: n }, (_, i) => {
    events.push([]);
    return Resilience.default
      .with({
        name: 'llm',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        limit: Limit.rate({
          limit: 100,
          per: 1000,
          burst: 10,
          store,
          expectedInstances: n,
          ...rate,
        }),
      })
      .withListener((e) => events[i]!.push(e));
  });
  return { policies, events, limiters: policies.map((p) => p.limiter() as RateLimiter) };
}

describe('a rate limit shared through a store (leases)', () => {
  it('4 processes offering 600/s in all share 200/s: every 1 s window after the first holds 200 ± 5 %, one round trip per 10 calls', async () => {
    const clock = new FakeClock();
    const store = new MemoryRateStore(clock, { roundTrip: 1 });
    const { policies, limiters } = fleet(4, store, clock, { limit: 200 });
    const admitted: number[] = [];
    // Uneven traffic: processes 0-1 offer 200/s each, 2-3 100/s each, for 10 s (1 ms steps).
    const every = [5, 5, 10, 10];
    for (let t = 0; t < 10_000; t++) {
      for (let i = 0; i < 4; i++) {
        if (t % every[i]! !== 0) continue;
        void policies[i]!.tryRun(() => (admitted.push(clock.now()), 'ok'));
      }
      await clock.advance(1);
    }
    await clock.advance(200);
    const windows = Array.from(
      { length: 10 },
      (_, s) => admitted.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length,
    );
    for (const count of windows.slice(1)) expect(Math.abs(count - 200)).toBeLessThanOrEqual(10);
    // The first window holds the burst too; the 10 s hold the limit within 1 %.
    expect(windows[0]).toBeLessThanOrEqual(200 + 10);
    expect(Math.abs(admitted.length - 2000)).toBeLessThanOrEqual(20);
    const granted = limiters.reduce((sum, l) => sum + l.snapshot().granted, 0);
    const trips = limiters.reduce((sum, l) => sum + l.snapshot().shared!.roundTrips, 0);
    expect(granted).toBe(admitted.length);
    expect(trips).toBe(store.requests);
    // A lease of 10 per round trip, and at most one request per process still in flight at the end.
    expect(trips).toBeLessThanOrEqual(granted / 10 + 4);
    // Every process got some: the busier ones more.
    expect(limiters.map((l) => l.snapshot().granted > 0)).toEqual([true, true, true, true]);
  });

  it('a first call waits for the store at most storeWait: answered in 2 ms it runs at 2 ms; past 5 ms it is judged by the local share', async () => {
    const clock = new FakeClock();
    const quick = fleet(1, new MemoryRateStore(clock, { roundTrip: 2 }), clock);
    const started: number[] = [];
    const a = quick.policies[0]!.run(() => (started.push(clock.now()), 'a'));
    await clock.advance(2);
    await expect(a).resolves.toBe('a');
    const slowStore = new MemoryRateStore(clock, { roundTrip: 40 });
    const slow = fleet(2, slowStore, clock);
    const b = slow.policies[0]!.run(() => (started.push(clock.now()), 'b'));
    await clock.advance(5);
    await expect(b).resolves.toBe('b');
    expect(started.map((t) => t - started[0]!)).toEqual([0, 5]);
    expect(slow.limiters[0]!.snapshot().shared).toMatchObject({ degraded: false, roundTrips: 1 });
    await clock.advance(40);
  });

  it('store down: one limiterDegraded per episode, calls carry on under limit / expectedInstances, the store is asked again every 500 ms; back: shared again, one limiterRecovered', async () => {
    const clock = new FakeClock();
    const store = new MemoryRateStore(clock, { roundTrip: 1 });
    const { policies, events, limiters } = fleet(4, store, clock, {
      limit: 100,
      burst: 8,
      lease: 4,
    });
    const policy = policies[0]!;
    const warm = policy.run(() => 'warm');
    await clock.advance(1);
    await expect(warm).resolves.toBe('warm');
    store.mode = 'down';
    store.clear();
    const outcomes: string[] = [];
    // 2 s at 100/s offered by this one process: its share while degraded is 25/s (burst 2).
    for (let t = 0; t < 2000; t += 10) {
      void policy.tryRun(() => 'ok').then((r) => outcomes.push(r.reason));
      await clock.advance(10);
    }
    await clock.advance(100);
    const kinds = events[0]!
      .filter((e) => e.kind.startsWith('limiter'))
      .map((e) => `${e.kind}:${e.error ?? ''}`);
    expect(kinds).toEqual(['limiterDegraded:StoreUnavailableError']);
    const snapshot = limiters[0]!.snapshot().shared!;
    expect(snapshot).toMatchObject({ degraded: true, degradedEpisodes: 1, state: 'down' });
    // Held leases ran out first (4 - 1 = 3), then the local share: 2 at once + 25/s.
    const succeeded = outcomes.filter((r) => r === 'succeeded').length;
    expect(succeeded).toBeGreaterThanOrEqual(2 + 48);
    expect(succeeded).toBeLessThanOrEqual(3 + 2 + 50);
    // Asked again every 500 ms while calls came.
    expect(snapshot.roundTrips).toBeGreaterThanOrEqual(4);
    expect(snapshot.roundTrips).toBeLessThanOrEqual(6);
    store.mode = 'up';
    for (let t = 0; t < 1000; t += 10) {
      void policy.tryRun(() => 'ok');
      await clock.advance(10);
    }
    expect(events[0]!.filter((e) => e.kind.startsWith('limiter')).map((e) => e.kind)).toEqual([
      'limiterDegraded',
      'limiterRecovered',
    ]);
    expect(limiters[0]!.snapshot().shared).toMatchObject({ degraded: false, state: 'ready' });
  });

  it('a partitioned store (no answer ever) counts as down after storeTimeout; nothing hangs, no timer is left behind', async () => {
    const clock = new FakeClock();
    const store = new MemoryRateStore(clock);
    store.mode = 'partitioned';
    const { policies, events, limiters } = fleet(2, store, clock, { storeTimeout: 100 });
    const first = policies[0]!.tryRun(() => 'ok');
    await clock.advance(5);
    // Judged by the local share after storeWait (5 ms): it ran.
    expect((await first).reason).toBe('succeeded');
    await clock.advance(95);
    expect(events[0]!.map((e) => e.kind)).toContain('limiterDegraded');
    expect(limiters[0]!.snapshot().shared!.degraded).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it('a shared limit needs a key or a policy name', () => {
    const store = new MemoryRateStore(new FakeClock());
    const policy = Resilience.default.with({ limit: Limit.rate({ limit: 1, per: 1000, store }) });
    expect(() => policy.limiter()).toThrow(
      'limit.rate.key: undefined is invalid: is required for a rate limit shared through a store when the policy has no name',
    );
    expect(
      (
        Resilience.default
          .with({ limit: Limit.rate({ limit: 1, per: 1000, store, key: 'k' }) })
          .limiter() as RateLimiter
      ).snapshot().shared!.key,
    ).toBe('k');
  });
});
