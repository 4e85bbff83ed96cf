import { describe, expect, it } from '@jest/globals';
import { Classifier, FakeClock, Verdict } from '../core/index.js';
import { ModuleOptionsReading } from './module-settings.js';
import { PolicyRegistry } from './policy-registry.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { UnknownPolicyError } from './unknown-policy.error.js';

const failing = (times: number) => {
  let calls = 0;
  return async () => {
    calls++;
    if (calls <= times) throw new Error(`boom ${calls}`);
    return calls;
  };
};

function create(options: Partial<ResilienceModuleOptions> = {}): {
  registry: PolicyRegistry;
  clock: FakeClock;
} {
  const clock = new FakeClock();
  const registry = PolicyRegistry.create({
    policies: {
      payments: {
        attempts: 3,
        backoff: { type: 'none' },
        budget: { fraction: 0.1, minimumPerSecond: 1 },
      },
      search: { budget: false },
    },
    clock,
    ...options,
  });
  return { registry, clock };
}

describe('PolicyRegistry', () => {
  it('owns one policy per name, named after it, on the module clock and random source', () => {
    const random = () => 0.25;
    const { registry, clock } = create({ random });
    expect(registry.names()).toEqual(['payments', 'search']);
    expect(registry.has('payments')).toBe(true);
    const payments = registry.get('payments');
    expect(registry.get('payments')).toBe(payments);
    expect(payments.name).toBe('payments');
    expect(payments.options.clock).toBe(clock);
    expect(payments.options.random).toBe(random);
    expect(registry.bucket('search')).toBeUndefined();
    expect(registry.bucket('payments')!.capacity).toBe(10);
    expect(clock.pending).toBe(0);
  });

  it('lists the registered names for an unknown name', () => {
    const { registry } = create();
    expect(() => registry.get('paymnets')).toThrow(UnknownPolicyError);
    expect(() => registry.get('paymnets')).toThrow(
      'Unknown resilience policy "paymnets"; registered policies: "payments", "search".',
    );
  });

  it('reload keeps the bucket and its level, under the new parameters', async () => {
    const { registry } = create();
    const bucket = registry.bucket('payments')!;
    expect(bucket.level).toBe(10);
    await expect(registry.get('payments').run(failing(2))).resolves.toBe(3); // two retries spend 2, one success deposits 0.1
    expect(bucket.level).toBeCloseTo(8.1, 10);
    const before = registry.get('payments');

    registry.reload({
      policies: {
        payments: { attempts: 5, budget: { fraction: 0.5, minimumPerSecond: 2 } },
        search: {},
      },
    });

    const after = registry.get('payments');
    expect(after).not.toBe(before);
    expect(after.options.attempts).toBe(5);
    expect(registry.bucket('payments')).toBe(bucket);
    expect(bucket.level).toBeCloseTo(8.1, 10);
    expect(bucket.capacity).toBe(20);
    expect(registry.bucket('search')!.level).toBe(30); // budget turned on: a new bucket, full
  });

  it('a bad reload throws every problem and keeps the old policies untouched', () => {
    const { registry } = create();
    const before = registry.get('payments');
    const bucket = registry.bucket('payments')!;
    let error: unknown;
    try {
      registry.reload({
        policies: {
          payments: { attempts: 0, budget: { fraction: 2, minimumPerSecond: 50 } },
          other: { deadline: 'never' },
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceConfigError);
    expect((error as ResilienceConfigError).problems.map((p) => p.field)).toEqual([
      'policies.payments.attempts',
      'policies.payments.budget.fraction',
      'policies.other.deadline',
    ]);
    expect(registry.get('payments')).toBe(before);
    expect(registry.names()).toEqual(['payments', 'search']);
    expect(registry.bucket('payments')).toBe(bucket);
    expect(bucket.capacity).toBe(10);
  });

  it('refuses a reload that drops a name the application uses', () => {
    const { registry } = create();
    registry.require(new Map([['payments', ['@Resilient on Checkout.pay']]]));
    expect(() => registry.reload({ policies: { search: {} } })).toThrow(
      'policies.payments: undefined is invalid: is required: it is used by @Resilient on Checkout.pay in the running application',
    );
    expect(registry.names()).toEqual(['payments', 'search']);
  });

  it('require names every unknown name and where it is used', () => {
    const { registry } = create();
    expect(() =>
      registry.require(
        new Map([
          ['payments', ['A']],
          ['ledger', ['@InjectPolicy in B', '@Resilient on C.d']],
        ]),
      ),
    ).toThrow(
      'Unknown resilience policy "ledger" (@InjectPolicy in B, @Resilient on C.d); registered policies: "payments", "search".',
    );
  });

  it('a shared budget is one bucket for every policy naming it, and stays shared across reloads', () => {
    const { registry } = create({
      policies: {
        a: { budget: { shared: 'downstream' } },
        b: { budget: { shared: 'downstream' } },
        c: {},
      },
    });
    const shared = registry.bucket('a')!;
    expect(registry.bucket('b')).toBe(shared);
    expect(registry.bucket('c')).not.toBe(shared);
    registry.reload({
      policies: {
        a: { budget: { shared: 'downstream' } },
        b: { budget: { shared: 'downstream' } },
        c: { budget: { shared: 'downstream' } },
      },
    });
    expect(registry.bucket('a')).toBe(shared);
    expect(registry.bucket('c')).toBe(shared);
  });

  it('handles are stable and run the current policy after a reload', async () => {
    const { registry } = create();
    const handle = registry.handle('payments');
    expect(registry.handle('payments')).toBe(handle);
    expect(handle.name).toBe('payments');
    await expect(handle.run(failing(4))).rejects.toThrow('boom 3');
    registry.reload({
      policies: { payments: { attempts: 5, backoff: { type: 'none' } }, search: {} },
    });
    expect(handle.current).toBe(registry.get('payments'));
    await expect(handle.run(failing(4))).resolves.toBe(5);
    const result = await handle.tryRun(failing(9));
    expect(result.ok).toBe(false);
    expect(result.attempts).toHaveLength(5);
    await expect(registry.handle('nope').run(async () => 1)).rejects.toThrow(UnknownPolicyError);
  });

  it('validates the module options: clock, random and module-definition options given to the factory', () => {
    const bad = {
      policies: {},
      clock: { now: () => 0 },
      random: 3,
      exceptionFilter: true,
      isGlobal: false,
    } as unknown as ResilienceModuleOptions;
    expect(() => PolicyRegistry.create(bad)).toThrow(
      [
        'Invalid resilience config (4 problems):',
        '  - clock: {"now":[function]} is invalid: must be a Clock (now, setTimer, clearTimer), e.g. new FakeClock()',
        '  - random: 3 is invalid: must be a function returning a number in [0, 1)',
        '  - isGlobal: false is invalid: is a module definition option: give it to forRoot({ isGlobal }) or beside useFactory in forRootAsync({ isGlobal, useFactory })',
        '  - exceptionFilter: true is invalid: is a module definition option: give it to forRoot({ exceptionFilter }) or beside useFactory in forRootAsync({ exceptionFilter, useFactory })',
      ].join('\n'),
    );
  });

  it('reports use before initialization', () => {
    const registry = new PolicyRegistry(ModuleOptionsReading.of({ policies: { a: {} } }));
    expect(() => registry.get('a')).toThrow(/not initialized yet.*app\.init\(\)/);
    registry.onModuleInit();
    expect(registry.get('a').name).toBe('a');
    registry.onModuleDestroy();
  });
});

describe('PolicyRegistry.describe(name).classifier', () => {
  it("names the built-in classifier, lists the rules with their base, says 'custom' for code, and follows a reload", () => {
    const registry = PolicyRegistry.create({
      defaults: { classifier: 'grpc' },
      policies: {
        inventory: {},
        api: { preset: 'http' },
        plain: { classifier: 'default' },
        payments: { classifier: { base: 'http', permanent: ['ValidationError', 409] } },
        search: {},
      },
      classifiers: { search: Classifier.http.with(Classifier.when(RangeError, Verdict.permanent)) },
    });
    const described = (name: string) => registry.describe(name).classifier;
    expect(described('inventory')).toBe('grpc');
    // defaults apply to every policy: the preset's own classifier shows only without them.
    expect(described('api')).toBe('grpc');
    expect(described('plain')).toBe('default');
    expect(described('payments')).toEqual({
      base: 'http',
      permanent: ['ValidationError', 409],
      transient: [],
      throttled: [],
    });
    expect(described('search')).toBe('custom');
    registry.reload({
      policies: {
        inventory: { classifier: { base: 'grpc', transient: ['FAILED_PRECONDITION'] } },
        api: { preset: 'http' },
        plain: {},
        payments: {},
        search: {},
      },
    });
    expect(described('inventory')).toEqual({
      base: 'grpc',
      permanent: [],
      transient: ['FAILED_PRECONDITION'],
      throttled: [],
    });
    expect([
      described('api'),
      described('plain'),
      described('payments'),
      described('search'),
    ]).toEqual(['http', 'default', 'default', 'custom']);
    // The description is plain JSON: what a health page or a log line can serve as it is.
    expect(JSON.parse(JSON.stringify(registry.describe('inventory'))).classifier).toEqual(
      described('inventory'),
    );
  });
});
