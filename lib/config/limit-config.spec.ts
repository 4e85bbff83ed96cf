import { describe, expect, it } from '@jest/globals';
import { type ConcurrencyLimiter, FakeClock, RateLimiter } from '../core/index.js';
import { MemoryRateStore } from '../testing/index.js';
import { PinnedPolicies } from './pinned-policies.js';
import { parseResilienceConfig } from './policy-config.js';
import { ResilienceConfigError } from './resilience-config.error.js';
import { problemsOf } from '../../test/support/config-problems.js';

describe('limit and saturation in config', () => {
  it('builds a bulkhead, an adaptive limit and a saturation guard, in a policy and in defaults', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(
      parseResilienceConfig({
        defaults: { limit: { adaptive: { initial: 20, maximum: 200 } }, saturation: 5 },
        policies: {
          prices: { limit: { concurrency: 20, queue: 50 } },
          search: {},
          plain: { limit: false, saturation: false },
        },
      }),
    );
    expect(policies.get('prices')!.limiter()!.snapshot()).toMatchObject({
      kind: 'concurrency',
      limit: 20,
      queue: 50,
      inflight: 0,
    });
    expect(policies.describe('prices')).toMatchObject({
      limit: { kind: 'concurrency', limit: 20, queue: 50 },
      saturation: 5,
    });
    expect(policies.describe('search')).toMatchObject({
      limit: { kind: 'adaptive', initial: 20, minimum: 1, maximum: 200, queue: 0 },
      saturation: 5,
    });
    expect(policies.get('search')!.options.saturation!.multiple).toBe(5);
    expect(policies.describe('plain')).toMatchObject({ limit: false, saturation: false });
    expect(policies.get('plain')!.limiter()).toBeUndefined();
  });

  it('refuses bad values naming the path, the value and the rule', () => {
    expect(
      problemsOf({
        defaults: { limit: { concurrency: 0 } },
        policies: {
          a: { limit: { concurrency: 2.5 } },
          b: { limit: { concurrency: 5, queue: -1 } },
          c: { limit: { adaptive: { minimum: 10, maximum: 5 } } },
          d: { limit: { adaptive: true, size: 3 } },
          e: { limit: 20 },
          f: { saturation: 1 },
        },
      }),
    ).toEqual([
      'defaults.limit.concurrency: 0 is invalid: must be an integer in [1, 100000] (calls in flight at once)',
      'policies.a.limit.concurrency: 2.5 is invalid: must be an integer in [1, 100000] (calls in flight at once)',
      'policies.b.limit.queue: -1 is invalid: must be an integer >= 0 (or Infinity)',
      'policies.c.limit.adaptive.minimum: 10 is invalid: must be <= maximum (5)',
      'policies.d.limit.size: 3 is invalid: is not a known limit setting (concurrency, adaptive, queue, rate)',
      'policies.e.limit: 20 is invalid: must be { concurrency, queue? }, { adaptive: { initial?, minimum?, maximum? } | true, queue? } or { rate: { limit, per, burst?, maximumWait? } }, a Limit, or false',
      "policies.f.saturation: 1 is invalid: must be a finite number > 1 (a multiple of the event loop's normal delay, e.g. 5)",
    ]);
  });

  it('a reload resizes the live limiter pinned to the name, keeping its calls in flight and starting queued callers at once', async () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    policies.apply(
      parseResilienceConfig({ policies: { prices: { limit: { concurrency: 1, queue: 5 } } } }),
    );
    const before = policies.get('prices')!;
    const limiter = before.limiter() as ConcurrencyLimiter;
    const release: (() => void)[] = [];
    const work = () => new Promise<string>((resolve) => release.push(() => resolve('ok')));
    const running = before.run(work);
    const queued = [before.run(work), before.run(work)];
    await clock.advance(0);
    expect([limiter.inflight, limiter.queued]).toEqual([1, 2]);
    policies.apply(
      parseResilienceConfig({ policies: { prices: { limit: { concurrency: 3, queue: 5 } } } }),
    );
    const after = policies.get('prices')!;
    expect(after).not.toBe(before);
    expect(after.limiter()).toBe(limiter);
    await clock.advance(0);
    expect([limiter.limit, limiter.inflight, limiter.queued]).toEqual([3, 3, 0]);
    // A smaller limit admits nobody new until in-flight falls under it.
    policies.apply(
      parseResilienceConfig({ policies: { prices: { limit: { concurrency: 1, queue: 5 } } } }),
    );
    const late = policies.get('prices')!.run(work);
    await clock.advance(0);
    expect([limiter.inflight, limiter.queued]).toEqual([3, 1]);
    for (const r of release.splice(0)) r();
    await Promise.all([running, ...queued]);
    await clock.advance(0);
    expect([limiter.inflight, limiter.queued]).toEqual([1, 0]);
    release.splice(0).forEach((r) => r());
    await expect(late).resolves.toBe('ok');
    expect(limiter.inflight).toBe(0);
  });

  it('a reload that removes the limit, the name, or makes it a rate limit starts its queued callers at once', async () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    const config = (limit: unknown) =>
      parseResilienceConfig({ policies: { prices: { limit }, other: {} } });
    policies.apply(config({ concurrency: 1, queue: 5 }));
    const limiter = policies.get('prices')!.limiter() as ConcurrencyLimiter;
    const started: number[] = [];
    const release: (() => void)[] = [];
    const work = (n: number) => () => {
      started.push(n);
      return new Promise<number>((resolve) => release.push(() => resolve(n)));
    };
    const calls = [0, 1, 2].map((n) => policies.get('prices')!.run(work(n)));
    await clock.advance(0);
    expect([started, limiter.queued]).toEqual([[0], 2]);
    policies.apply(config(false));
    await clock.advance(0);
    expect([started, limiter.queued]).toEqual([[0, 1, 2], 0]);
    release.splice(0).forEach((r) => r());
    await expect(Promise.all(calls)).resolves.toEqual([0, 1, 2]);
    expect(limiter.inflight).toBe(0);
    // Put back, the limit binds again on the same limiter.
    policies.apply(config({ concurrency: 1, queue: 5 }));
    expect(policies.get('prices')!.limiter()).toBe(limiter);
    expect(limiter.limit).toBe(1);
    // A name removed from the config lets its queued callers go too.
    const more = [3, 4].map((n) => policies.get('prices')!.run(work(n)));
    await clock.advance(0);
    expect(limiter.queued).toBe(1);
    policies.apply(parseResilienceConfig({ policies: { other: {} } }));
    await clock.advance(0);
    expect([started, limiter.queued]).toEqual([[0, 1, 2, 3, 4], 0]);
    release.splice(0).forEach((r) => r());
    await expect(Promise.all(more)).resolves.toEqual([3, 4]);
    // Turned into a rate limit: a new limiter, and the old one's queue goes now.
    policies.apply(config({ concurrency: 1, queue: 5 }));
    const last = [5, 6].map((n) => policies.get('prices')!.run(work(n)));
    await clock.advance(0);
    expect(limiter.queued).toBe(1);
    policies.apply(config({ rate: { limit: 100, per: 1000 } }));
    await clock.advance(0);
    expect([started, limiter.queued]).toEqual([[0, 1, 2, 3, 4, 5, 6], 0]);
    release.splice(0).forEach((r) => r());
    await expect(Promise.all(last)).resolves.toEqual([5, 6]);
  });

  it('a reload with a bad value keeps the old limiter as it was', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(parseResilienceConfig({ policies: { prices: { limit: { concurrency: 4 } } } }));
    const limiter = policies.get('prices')!.limiter() as ConcurrencyLimiter;
    expect(() =>
      policies.apply(
        parseResilienceConfig({ policies: { prices: { limit: { concurrency: -4 } } } }),
      ),
    ).toThrow(ResilienceConfigError);
    expect(policies.get('prices')!.limiter()).toBe(limiter);
    expect(limiter.limit).toBe(4);
  });

  it('each key of a scoped name has its own limiter', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(
      parseResilienceConfig({ policies: { tenants: { limit: { concurrency: 2 }, scope: true } } }),
    );
    const scope = policies.scope('tenants')!;
    const a = scope.for('a').limiter()!;
    const b = scope.for('b').limiter()!;
    expect(a).not.toBe(b);
    expect(a).not.toBe(policies.get('tenants')!.limiter());
    expect(a.limit).toBe(2);
  });
});

describe('hedge in config', () => {
  it('builds a hedge in a policy and from defaults; a policy’s own replaces the default, false turns it off', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(
      parseResilienceConfig({
        defaults: { hedge: { quantile: 0.95 } },
        policies: {
          prices: {
            hedge: { quantile: 0.9, maximumConcurrent: 3, suppressAt: 0.4, winRate: 0.1 },
            repeatable: true,
          },
          search: {},
          plain: { hedge: false },
        },
      }),
    );
    expect(policies.get('prices')!.options.hedge!.settings).toEqual({
      quantile: 0.9,
      maximumConcurrent: 3,
      suppressAt: 0.4,
      winRate: 0.1,
    });
    expect(policies.get('prices')!.options.repeatable).toBe(true);
    expect(policies.describe('search')).toMatchObject({
      hedge: { quantile: 0.95, maximumConcurrent: 2, suppressAt: 0.5, winRate: undefined },
    });
    expect(policies.get('search')!.options.repeatable).toBe(false);
    expect(policies.describe('plain')).toMatchObject({ hedge: false });
    expect(policies.get('plain')!.hedger()).toBeUndefined();
  });

  it('pins what the hedge learnt to the name: a reload keeps the latency window and takes the new settings', () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    policies.apply(parseResilienceConfig({ policies: { prices: { hedge: { quantile: 0.95 } } } }));
    const state = policies.get('prices')!.hedger()!;
    for (let i = 0; i < 20; i++) state.latency.add(0, 40);
    policies.apply(
      parseResilienceConfig({ policies: { prices: { hedge: { quantile: 0.5 }, attempts: 4 } } }),
    );
    const after = policies.get('prices')!.hedger()!;
    expect(after).toBe(state);
    expect(after.settings.quantile).toBe(0.5);
    expect(after.threshold(0)).toBeCloseTo(40, -1);
  });

  it('refuses bad values at start-up naming the path, the value and the rule', () => {
    expect(
      problemsOf({
        defaults: { hedge: { quantile: 1.5 } },
        policies: {
          a: { hedge: { quantile: 0.95, maximumConcurrent: 1 } },
          b: { hedge: { quantile: 0.95, suppressAt: 0 } },
          c: { hedge: { maximumConcurrent: 2 } },
          d: { hedge: { quantile: 0.95, delay: '1s' } },
          e: { hedge: 0.95 },
          f: { repeatable: 'yes' },
        },
      }),
    ).toEqual([
      'defaults.hedge.quantile: 1.5 is invalid: must be a number in (0, 1), e.g. 0.95',
      'policies.a.hedge.maximumConcurrent: 1 is invalid: must be an integer in [2, 10] (attempts in flight at once, the first counted)',
      'policies.b.hedge.suppressAt: 0 is invalid: must be a number in (0, 1]',
      'policies.c.hedge.quantile: undefined is invalid: must be a number in (0, 1), e.g. 0.95',
      'policies.d.hedge.delay: "1s" is invalid: is not a known hedge setting (quantile, maximumConcurrent, suppressAt, winRate)',
      'policies.e.hedge: 0.95 is invalid: must be { quantile, maximumConcurrent?, suppressAt?, winRate? }, or false',
      'policies.f.repeatable: "yes" is invalid: must be true or false',
    ]);
  });
});

describe('rate limits in config', () => {
  it('reads { rate: { limit, per, burst } } with per as a duration string, pinned to the name', async () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    policies.apply(
      parseResilienceConfig({
        policies: {
          stripe: {
            attempts: 1,
            budget: false,
            limit: { rate: { limit: 100, per: '1s', burst: 20, maximumWait: '50ms' } },
          },
        },
      }),
    );
    expect(policies.describe('stripe')).toMatchObject({
      limit: { kind: 'rate', limit: 100, per: 1000, burst: 20, maximumWait: 50 },
    });
    const policy = policies.get('stripe')!;
    const limiter = policy.limiter() as RateLimiter;
    expect(limiter).toBeInstanceOf(RateLimiter);
    const results = await Promise.all(Array.from({ length: 20 }, () => policy.run(() => 'ok')));
    expect(results).toHaveLength(20);
    expect(limiter.snapshot()).toMatchObject({ available: 0, granted: 20 });
  });

  it('a reload that changes the rate adopts it on the same bucket without refilling it; a change of kind starts the other limiter', () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    policies.apply(
      parseResilienceConfig({
        policies: { stripe: { limit: { rate: { limit: 10, per: '1s', burst: 10 } } } },
      }),
    );
    const limiter = policies.get('stripe')!.limiter() as RateLimiter;
    for (let i = 0; i < 10; i++) limiter.tryAcquire();
    expect(limiter.refusalRetryAfter()).toBe(100);
    policies.apply(
      parseResilienceConfig({
        policies: { stripe: { limit: { rate: { limit: 20, per: '1s', burst: 10 } } } },
      }),
    );
    expect(policies.get('stripe')!.limiter()).toBe(limiter);
    expect(limiter.snapshot()).toMatchObject({ limit: 20, available: 0 });
    expect(limiter.refusalRetryAfter()).toBe(50);
    // A bad reload keeps it as it was.
    expect(() =>
      policies.apply(
        parseResilienceConfig({
          policies: { stripe: { limit: { rate: { limit: 20, per: 'soon' } } } },
        }),
      ),
    ).toThrow(ResilienceConfigError);
    expect(policies.get('stripe')!.limiter()).toBe(limiter);
    policies.apply(parseResilienceConfig({ policies: { stripe: { limit: { concurrency: 4 } } } }));
    expect(policies.get('stripe')!.limiter()!.snapshot()).toMatchObject({
      kind: 'concurrency',
      limit: 4,
    });
  });

  it('refuses bad rate values, a store in config and a rate combined with a concurrency limit', () => {
    expect(
      problemsOf({
        policies: {
          a: { limit: { rate: { limit: 0, per: '1s' } } },
          b: { limit: { rate: { limit: 10, per: 'soon' } } },
          c: { limit: { rate: { limit: 10 } } },
          d: { limit: { concurrency: 5, rate: { limit: 10, per: '1s' } } },
          e: { limit: { rate: { limit: 10, per: '1s', store: 'redis' } } },
          f: { limit: { rate: 100 } },
        },
      }),
    ).toEqual([
      'policies.a.limit.rate.limit: 0 is invalid: must be an integer in [1, 1000000] (calls per period)',
      'policies.b.limit.rate.per: "soon" is invalid: must be a duration in ms > 0 and at most a day (86400000), written as a ms number or a string such as "250ms", "10s", "2m"',
      'policies.c.limit.rate.per: undefined is invalid: is required: must be a duration in ms > 0 and at most a day (86400000)',
      'policies.d.limit.concurrency: 5 is invalid: cannot be combined with rate: a policy has one limit, a concurrency limit or a rate limit (a rate limit waits up to rate.maximumWait instead of queueing)',
      'policies.e.limit.rate.store: "redis" is invalid: cannot be written in config: a store is given in code (ResilienceModule.forRoot({ redis }) and rate.shared: true)',
      'policies.f.limit.rate: 100 is invalid: must be { limit, per, burst?, maximumWait?, store?, shared?, key?, expectedInstances?, lease?, storeWait?, storeTimeout? }',
    ]);
  });

  it('shared: true shares the limit through the store the application gave, keyed by the name; without one the build names the field', async () => {
    const clock = new FakeClock();
    const store = new MemoryRateStore(clock);
    const config = {
      policies: {
        openai: {
          attempts: 1,
          budget: false,
          limit: {
            rate: {
              limit: 50,
              per: '1s',
              burst: 10,
              shared: true,
              expectedInstances: 5,
              storeWait: '5ms',
            },
          },
        },
      },
    };
    const policies = new PinnedPolicies({ clock, rateStore: store });
    policies.apply(parseResilienceConfig(config));
    const policy = policies.get('openai')!;
    const first = policy.run(() => 'ok');
    await clock.advance(0);
    await expect(first).resolves.toBe('ok');
    expect((policy.limiter() as RateLimiter).snapshot().shared).toMatchObject({
      store: 'memory',
      key: 'openai',
      degraded: false,
      roundTrips: 1,
    });
    expect(store.requests).toBe(1);
    const without = new PinnedPolicies({ clock });
    expect(() => without.apply(parseResilienceConfig(config))).toThrow(
      'policies.openai.limit.rate.shared: true is invalid: needs a store: give the module one (ResilienceModule.forRoot({ redis: { url } }) with @nresilience/nestjs/redis)',
    );
  });
});
