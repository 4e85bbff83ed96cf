import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../core/index.js';
import { PinnedPolicies } from './pinned-policies.js';
import { parseResilienceConfig } from './policy-config.js';
import { ResilienceConfigError } from './resilience-config.error.js';

function problemsOf(config: unknown): string[] {
  try {
    parseResilienceConfig(config);
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceConfigError);
    return (error as ResilienceConfigError).problems.map((p) => p.message);
  }
  throw new Error('expected the config to be rejected');
}

describe('limit and saturation in config', () => {
  it('builds a bulkhead, an adaptive limit and a saturation guard, in a policy and in defaults', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(
      parseResilienceConfig({
        defaults: { limit: { adaptive: { initial: 20, maximum: 200 } }, saturation: 5 },
        policies: { prices: { limit: { concurrency: 20, queue: 50 } }, search: {}, plain: { limit: false, saturation: false } },
      }),
    );
    expect(policies.get('prices')!.limiter()!.snapshot()).toMatchObject({ kind: 'concurrency', limit: 20, queue: 50, inflight: 0 });
    expect(policies.describe('prices')).toMatchObject({ limit: { kind: 'concurrency', limit: 20, queue: 50 }, saturation: 5 });
    expect(policies.describe('search')).toMatchObject({ limit: { kind: 'adaptive', initial: 20, minimum: 1, maximum: 200, queue: 0 }, saturation: 5 });
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
      'policies.c.limit.minimum: 10 is invalid: must be <= maximum (5)',
      'policies.d.limit.size: 3 is invalid: is not a known limit setting (concurrency, adaptive, queue)',
      'policies.e.limit: 20 is invalid: must be { concurrency, queue? } or { adaptive: { initial?, minimum?, maximum? } | true, queue? }, a Limit, or false',
      "policies.f.saturation: 1 is invalid: must be a finite number > 1 (a multiple of the event loop's normal delay, e.g. 5)",
    ]);
  });

  it('a reload resizes the live limiter pinned to the name, keeping its calls in flight and starting queued callers at once', async () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    policies.apply(parseResilienceConfig({ policies: { prices: { limit: { concurrency: 1, queue: 5 } } } }));
    const before = policies.get('prices')!;
    const limiter = before.limiter()!;
    const release: (() => void)[] = [];
    const work = () => new Promise<string>((resolve) => release.push(() => resolve('ok')));
    const running = before.run(work);
    const queued = [before.run(work), before.run(work)];
    await clock.advance(0);
    expect([limiter.inflight, limiter.queued]).toEqual([1, 2]);
    policies.apply(parseResilienceConfig({ policies: { prices: { limit: { concurrency: 3, queue: 5 } } } }));
    const after = policies.get('prices')!;
    expect(after).not.toBe(before);
    expect(after.limiter()).toBe(limiter);
    await clock.advance(0);
    expect([limiter.limit, limiter.inflight, limiter.queued]).toEqual([3, 3, 0]);
    // A smaller limit admits nobody new until in-flight falls under it.
    policies.apply(parseResilienceConfig({ policies: { prices: { limit: { concurrency: 1, queue: 5 } } } }));
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

  it('a reload with a bad value keeps the old limiter as it was', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(parseResilienceConfig({ policies: { prices: { limit: { concurrency: 4 } } } }));
    const limiter = policies.get('prices')!.limiter()!;
    expect(() => policies.apply(parseResilienceConfig({ policies: { prices: { limit: { concurrency: -4 } } } }))).toThrow(ResilienceConfigError);
    expect(policies.get('prices')!.limiter()).toBe(limiter);
    expect(limiter.limit).toBe(4);
  });

  it('each key of a scoped name has its own limiter', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(parseResilienceConfig({ policies: { tenants: { limit: { concurrency: 2 }, scope: true } } }));
    const scope = policies.scope('tenants')!;
    const a = scope.for('a').limiter()!;
    const b = scope.for('b').limiter()!;
    expect(a).not.toBe(b);
    expect(a).not.toBe(policies.get('tenants')!.limiter());
    expect(a.limit).toBe(2);
  });
});
