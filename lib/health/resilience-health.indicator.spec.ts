import { describe, expect, it } from '@jest/globals';
import { HealthIndicatorService } from '@nestjs/terminus';
import { CircuitBreaker, FakeClock, PolicyScope, Resilience } from '../core/index.js';
import { HostPolicies } from '../http/host-policies.js';
import { ServicePolicies } from '../grpc/service-policies.js';
import { PolicyRegistry } from '../nest/policy-registry.js';
import {
  DEFAULT_HEALTH_KEYS,
  ResilienceHealthIndicator,
  type ScopeReadable,
} from './resilience-health.indicator.js';

function setup(policies: Record<string, unknown>) {
  const clock = new FakeClock();
  const registry = PolicyRegistry.create({ policies: policies as never, clock });
  return {
    clock,
    registry,
    indicator: new ResilienceHealthIndicator(new HealthIndicatorService(), registry),
  };
}

/** Opens `breaker` with 5 Transient attempts (breakDuration 15 s, jitter none → exact). */
function trip(breaker: CircuitBreaker): void {
  for (let i = 0; i < 5; i++) breaker.record(breaker.admit(), 'Transient', 0);
}

const BREAKER = { breakDuration: 15_000, jitter: 'none' as const };

describe('ResilienceHealthIndicator.isHealthy', () => {
  it('reports every registered policy in config order under the default key', () => {
    const { indicator } = setup({ b: { budget: false }, a: { preset: 'http' } });
    expect(indicator.isHealthy()).toEqual({
      resilience: {
        status: 'up',
        b: { status: 'ok', breaker: 'none', breakRemaining: 0, budgetUtilization: null },
        a: { status: 'ok', breaker: 'closed', breakRemaining: 0, budgetUtilization: 0 },
      },
    });
    expect(Object.keys(indicator.isHealthy('guards').guards)).toEqual(['b', 'a', 'status']);
  });

  it('an open breaker is degraded and up; downWhenOpen makes it down; other policies do not', async () => {
    const { registry, indicator, clock } = setup({
      payments: { breaker: BREAKER },
      search: { breaker: BREAKER },
    });
    trip(registry.breaker('search')!);
    expect(indicator.isHealthy('r', { downWhenOpen: ['payments'] }).r.status).toBe('up');
    trip(registry.breaker('payments')!);
    const up = indicator.isHealthy('r');
    expect(up.r).toEqual({
      status: 'up',
      payments: {
        status: 'degraded',
        breaker: 'open',
        breakRemaining: 15_000,
        budgetUtilization: 0,
      },
      search: { status: 'degraded', breaker: 'open', breakRemaining: 15_000, budgetUtilization: 0 },
    });
    expect(indicator.isHealthy('r', { downWhenOpen: ['payments'] }).r.status).toBe('down');
    await clock.advance(15_000);
    const half = indicator.isHealthy('r', { downWhenOpen: ['payments'] });
    expect(half.r.status).toBe('up');
    expect(half.r.payments).toEqual({
      status: 'degraded',
      breaker: 'halfOpen',
      breakRemaining: 0,
      budgetUtilization: 0,
    });
  });

  it('rounds the break left up to whole ms', async () => {
    const { registry, indicator, clock } = setup({ payments: { breaker: BREAKER } });
    trip(registry.breaker('payments')!);
    await clock.advance(0.25);
    expect(indicator.isHealthy().resilience.payments.breakRemaining).toBe(15_000);
  });

  it('policies selects and orders; downWhenOpen names are added; unknown names are unregistered, never down', () => {
    const { registry, indicator } = setup({ a: {}, b: {}, payments: { breaker: BREAKER } });
    trip(registry.breaker('payments')!);
    const result = indicator.isHealthy('r', {
      policies: ['b', 'nope'],
      downWhenOpen: ['payments', 'missing'],
    });
    expect(Object.keys(result.r)).toEqual(['b', 'nope', 'payments', 'missing', 'status']);
    expect(result.r.nope).toEqual({ status: 'unregistered' });
    expect(result.r.missing).toEqual({ status: 'unregistered' });
    expect(result.r.status).toBe('down');
    expect(indicator.isHealthy('r', { policies: [], downWhenOpen: ['missing'] }).r).toEqual({
      status: 'up',
      missing: { status: 'unregistered' },
    });
  });

  it('an exhausted retry budget is degraded (breaker closed)', () => {
    const { registry, indicator } = setup({
      payments: { budget: { fraction: 0, minimumPerSecond: 1 } },
    });
    const bucket = registry.bucket('payments')!;
    while (bucket.tryAcquire());
    expect(indicator.isHealthy().resilience.payments).toEqual({
      status: 'degraded',
      breaker: 'none',
      breakRemaining: 0,
      budgetUtilization: 1,
    });
  });

  it('a policy named status is listed as policy:status (terminus reserves status)', () => {
    const { indicator } = setup({ status: { budget: false } });
    expect(indicator.isHealthy().resilience).toEqual({
      status: 'up',
      'policy:status': {
        status: 'ok',
        breaker: 'none',
        breakRemaining: 0,
        budgetUtilization: null,
      },
    });
  });

  it('lists scope keys: degraded first, capped at maximumKeys with the rest counted; keys never change the status', () => {
    const { registry, indicator, clock } = setup({ billing: { breaker: BREAKER } });
    const breakers = new Map<string, CircuitBreaker>();
    for (const tenant of ['t1', 't2', 't3', 't4'])
      breakers.set(tenant, new CircuitBreaker(BREAKER as never, { clock, random: () => 0.5 }));
    trip(breakers.get('t3')!);
    const scope: ScopeReadable = {
      get size() {
        return breakers.size;
      },
      entries: (limit = 100) =>
        [...breakers].slice(0, limit).map(([key, breaker]) => ({
          key,
          policy: { breaker: () => breaker, bucket: () => undefined },
        })),
    };
    const result = indicator.isHealthy('r', {
      scopes: { billing: scope, orphan: scope },
      maximumKeys: 2,
      downWhenOpen: ['billing'],
    });
    const keyed = {
      keyCount: 4,
      keysDegraded: 1,
      keys: {
        t3: {
          status: 'degraded',
          breaker: 'open',
          breakRemaining: 15_000,
          budgetUtilization: null,
        },
        t1: { status: 'ok', breaker: 'closed', breakRemaining: 0, budgetUtilization: null },
      },
      keysNotShown: 2,
    };
    expect(result.r).toEqual({
      status: 'up',
      billing: {
        status: 'ok',
        breaker: 'closed',
        breakRemaining: 0,
        budgetUtilization: 0,
        ...keyed,
      },
      orphan: { status: 'ok', ...keyed },
    });
    expect(registry.breaker('billing')!.state).toBe('closed');
    expect(
      Object.keys(indicator.isHealthy('r', { scopes: { billing: scope } }).r.billing.keys),
    ).toEqual(['t3', 't1', 't2', 't4']);
    expect(DEFAULT_HEALTH_KEYS).toBe(20);
  });

  it('throws TypeError for malformed options', () => {
    const { indicator } = setup({ a: {} });
    expect(() => indicator.isHealthy('r', { policies: 'a' as never })).toThrow(TypeError);
    expect(() => indicator.isHealthy('r', { downWhenOpen: [1] as never })).toThrow(
      /downWhenOpen must be an array of policy names/,
    );
    expect(() => indicator.isHealthy('r', { maximumKeys: -1 })).toThrow(
      /maximumKeys must be an integer >= 0/,
    );
    expect(() => indicator.isHealthy('r', { scopes: { a: {} as never } })).toThrow(
      /scopes\.a must be a PolicyScope/,
    );
    expect(() => indicator.isHealthy('r', null as never)).toThrow(TypeError);
  });
});

describe('ResilienceHealthIndicator with scoped policies from config', () => {
  it('lists the keys of a policy configured with scope, without the scopes option', async () => {
    const { registry, indicator } = setup({
      billing: { attempts: 1, budget: false, breaker: BREAKER, scope: { maximumKeys: 10 } },
    });
    const handle = registry.handle('billing');
    for (let i = 0; i < 5; i++)
      await handle.for('noisy').tryRun(() => Promise.reject(new Error('down')));
    await handle.for('quiet').run(() => 'ok');
    const billing = indicator.isHealthy().resilience.billing as unknown as {
      keyCount: number;
      keysDegraded: number;
      keys: Record<string, { breaker: string }>;
    };
    expect([billing.keyCount, billing.keysDegraded]).toEqual([2, 1]);
    expect(Object.entries(billing.keys).map(([key, value]) => [key, value.breaker])).toEqual([
      ['noisy', 'open'],
      ['quiet', 'closed'],
    ]);
  });
});

describe('ResilienceHealthIndicator with per-host and per-service keys', () => {
  const ORDERS = { attempts: 1, budget: false as const, breaker: BREAKER };

  it("summarises a name's hosts: degraded while one is open, the worst breaker, downWhenOpen by name applies to them", async () => {
    const { registry, indicator, clock } = setup({ orders: ORDERS });
    const hosts = new HostPolicies(registry.handle('orders'), 8);
    await hosts.for('https://ok.example').run(() => 'ok');
    expect(indicator.isHealthy('r', { downWhenOpen: ['orders'] }).r).toEqual({
      status: 'up',
      orders: {
        status: 'ok',
        breaker: 'closed',
        breakRemaining: 0,
        budgetUtilization: null,
        keyCount: 1,
        keysDegraded: 0,
        keys: {
          'https://ok.example': {
            status: 'ok',
            breaker: 'closed',
            breakRemaining: 0,
            budgetUtilization: null,
          },
        },
        keysNotShown: 0,
      },
    });
    for (let i = 0; i < 5; i++)
      await hosts.for('https://dead.example').tryRun(() => Promise.reject(new Error('down')));
    await clock.advance(1_000);
    const result = indicator.isHealthy('r', { downWhenOpen: ['orders'] });
    expect(result.r.status).toBe('down');
    expect(result.r.orders).toEqual({
      status: 'degraded',
      breaker: 'open',
      breakRemaining: 14_000,
      budgetUtilization: null,
      keyCount: 2,
      keysDegraded: 1,
      keys: {
        'https://dead.example': {
          status: 'degraded',
          breaker: 'open',
          breakRemaining: 14_000,
          budgetUtilization: null,
        },
        'https://ok.example': {
          status: 'ok',
          breaker: 'closed',
          breakRemaining: 0,
          budgetUtilization: null,
        },
      },
      keysNotShown: 0,
    });
    // The name's own breaker was never used: the summary is the hosts'.
    expect(registry.breaker('orders')!.state).toBe('closed');
    expect(indicator.isHealthy('r').r.status).toBe('up');
    await clock.advance(14_000);
    expect(indicator.isHealthy('r', { downWhenOpen: ['orders'] }).r).toMatchObject({
      status: 'up',
      orders: { status: 'degraded', breaker: 'halfOpen', breakRemaining: 0 },
    });
  });

  it("summarises a gRPC interceptor's services built from the handle; the summary survives a reload", async () => {
    const { registry, indicator } = setup({ orders: ORDERS, other: {} });
    const services = new ServicePolicies(registry.handle('orders'), 8, undefined);
    for (let i = 0; i < 5; i++)
      await services
        .for('shop.v1.Orders')
        .tryRun(() => Promise.reject(Object.assign(new Error('unavailable'), { code: 14 })));
    registry.reload({ policies: { orders: ORDERS, other: { attempts: 2 } } });
    const orders = indicator.isHealthy('r', { downWhenOpen: ['orders'] }).r;
    expect(orders.status).toBe('down');
    expect(orders.orders).toMatchObject({
      status: 'degraded',
      breaker: 'open',
      keysDegraded: 1,
      keys: { 'shop.v1.Orders': { breaker: 'open' } },
    });
  });

  it('a tenant scope key stays its own trouble; a scope given whose keys carry a host is summarised like tracked hosts', async () => {
    const clock = new FakeClock();
    const { registry, indicator } = setup({ billing: { ...ORDERS, scope: true } });
    for (let i = 0; i < 5; i++)
      await registry
        .handle('billing')
        .for('tenant-1')
        .tryRun(() => Promise.reject(new Error('down')));
    expect(indicator.isHealthy('r', { downWhenOpen: ['billing'] }).r).toMatchObject({
      status: 'up',
      billing: { status: 'ok', breaker: 'closed', keysDegraded: 1 },
    });
    const hosts = new HostPolicies(Resilience.default.with({ clock, attempts: 1 }), 4);
    const labelled = new PolicyScope<string>(
      Resilience.http.with({ name: 'edge', clock, attempts: 1 }),
      { label: (key) => ({ host: key }) },
    );
    for (let i = 0; i < 5; i++)
      await labelled.for('cdn.example').tryRun(() => Promise.reject(new Error('down')));
    const result = indicator.isHealthy('r', {
      policies: [],
      scopes: { edge: labelled, plain: hosts },
    });
    expect(result.r).toMatchObject({
      status: 'up',
      edge: { status: 'degraded', breaker: 'open', keysDegraded: 1 },
      plain: { status: 'ok', keyCount: 0 },
    });
  });

  it('lists a key named __proto__ as an own property (counted and shown)', async () => {
    const { registry, indicator } = setup({ billing: { ...ORDERS, scope: true } });
    await registry
      .handle('billing')
      .for('__proto__')
      .run(() => 'ok');
    await registry
      .handle('billing')
      .for('constructor')
      .run(() => 'ok');
    const billing = indicator.isHealthy().resilience.billing as unknown as {
      keyCount: number;
      keys: Record<string, unknown>;
    };
    expect(billing.keyCount).toBe(2);
    expect(Object.keys(billing.keys)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(billing.keys)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(billing)).keys.__proto__).toEqual({
      status: 'ok',
      breaker: 'closed',
      breakRemaining: 0,
      budgetUtilization: null,
    });
  });
});

describe('ResilienceHealthIndicator: concurrency limits', () => {
  /** Starts `n` calls of `policy` that hold their slot until `release` is called. */
  function hold(policy: { run(work: () => Promise<void>): Promise<void> }, n: number) {
    const releases: (() => void)[] = [];
    const calls = Array.from({ length: n }, () =>
      policy.run(() => new Promise<void>((resolve) => releases.push(resolve))),
    );
    return { calls, release: () => releases.splice(0).forEach((resolve) => resolve()) };
  }

  it("shows the name's limiter (limit, in flight, queued, queue); a full one is not degraded; describe(name) shows the limit", async () => {
    const { registry, indicator } = setup({
      prices: { attempts: 1, budget: false, limit: { concurrency: 2, queue: 1 } },
    });
    expect(registry.describe('prices').limit).toEqual({ kind: 'concurrency', limit: 2, queue: 1 });
    const held = hold(registry.get('prices'), 3);
    await Promise.resolve();
    expect(indicator.isHealthy('r').r.prices).toEqual({
      status: 'ok',
      breaker: 'none',
      breakRemaining: 0,
      budgetUtilization: null,
      limiter: { kind: 'concurrency', limit: 2, inflight: 2, queued: 1, queue: 1 },
    });
    held.release();
    await new Promise((resolve) => setImmediate(resolve)); // the queued call takes the freed slot and starts
    held.release();
    await Promise.all(held.calls);
    expect(indicator.isHealthy('r').r.prices!.limiter).toEqual({
      kind: 'concurrency',
      limit: 2,
      inflight: 0,
      queued: 0,
      queue: 1,
    });
  });

  it('per key: each tenant of a scoped name shows its own limiter, the name its own', async () => {
    const { registry, indicator } = setup({
      tenants: {
        attempts: 1,
        budget: false,
        scope: { maximumKeys: 8 },
        limit: { adaptive: { initial: 4 } },
      },
    });
    const held = hold(registry.scope('tenants')!.for('acme'), 3);
    await Promise.resolve();
    const entry = indicator.isHealthy('r').r.tenants!;
    expect(entry.limiter).toEqual({ kind: 'adaptive', limit: 4, inflight: 0, queued: 0, queue: 0 });
    expect(entry.keys!.acme!.limiter).toEqual({
      kind: 'adaptive',
      limit: 4,
      inflight: 3,
      queued: 0,
      queue: 0,
    });
    held.release();
    await Promise.all(held.calls);
  });

  it("a name whose calls run per host shows each host's limiter and none of its own", async () => {
    const { registry, indicator } = setup({
      orders: { attempts: 1, budget: false, limit: { concurrency: 5 } },
    });
    const hosts = new HostPolicies(registry.handle('orders'), 8);
    const held = hold(hosts.for('https://a.example'), 2);
    await hosts.for('https://b.example').run(() => 'b');
    const entry = indicator.isHealthy('r').r.orders!;
    expect(entry.limiter).toBeUndefined();
    expect(
      Object.fromEntries(
        Object.entries(entry.keys!).map(([key, health]) => [
          key,
          (health as { limiter?: { inflight: number } }).limiter?.inflight,
        ]),
      ),
    ).toEqual({ 'https://a.example': 2, 'https://b.example': 0 });
    held.release();
    await Promise.all(held.calls);
  });
});
