import { describe, expect, it } from '@jest/globals';
import { CallRejectedError, FakeClock, PolicyConfigError, PolicyScope } from '../core/index.js';
import { parseResilienceConfig } from '../config/policy-config.js';
import { PolicyRegistry } from './policy-registry.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { UnknownPolicyError } from './unknown-policy.error.js';

const down = () => Promise.reject(new Error('down'));
const up = () => Promise.resolve('ok');

const policies = {
  billing: {
    attempts: 3,
    backoff: { type: 'none' as const },
    breaker: { jitter: 'none' as const },
    scope: { maximumKeys: 2 },
  },
  search: { preset: 'http' as const, scope: true },
  plain: { attempts: 2 },
};

function create() {
  const clock = new FakeClock();
  const registry = PolicyRegistry.create({ policies, clock, random: () => 0.5 });
  return { clock, registry, billing: registry.handle('billing') };
}

describe('policy config: scope', () => {
  it('reads true, false and { maximumKeys }, with 1024 by default; defaults merge key by key', () => {
    const parsed = parseResilienceConfig({
      defaults: { scope: { maximumKeys: 10 } },
      policies: {
        a: { scope: true },
        b: { scope: { maximumKeys: 5 } },
        c: { scope: false },
        d: {},
      },
    });
    expect(['a', 'b', 'c', 'd'].map((n) => parsed.policies.get(n)!.scope)).toEqual([
      { maximumKeys: 10 },
      { maximumKeys: 5 },
      undefined,
      { maximumKeys: 10 },
    ]);
    expect(
      parseResilienceConfig({ policies: { a: { scope: true }, b: {} } }).policies.get('a')!.scope,
    ).toEqual({ maximumKeys: 1024 });
    expect(parseResilienceConfig({ policies: { b: {} } }).policies.get('b')!.scope).toBeUndefined();
  });

  it('names the path, the value and the rule of every bad scope', () => {
    let error: ResilienceConfigError | undefined;
    try {
      parseResilienceConfig({
        defaults: { scope: 'tenant' as never },
        policies: {
          a: { scope: { maximumKeys: 0 } },
          b: { scope: { maximumKeys: 2.5, keys: 3 } as never },
          c: { scope: { maximumKeys: '100' as never } },
        },
      });
    } catch (caught) {
      error = caught as ResilienceConfigError;
    }
    expect(error).toBeInstanceOf(ResilienceConfigError);
    expect(error!.problems.map((p) => p.message)).toEqual([
      'defaults.scope: "tenant" is invalid: must be true, false or an object { maximumKeys? }',
      'policies.a.scope.maximumKeys: 0 is invalid: must be an integer >= 1 (the most keys a scope holds), at most 1000000',
      'policies.b.scope.keys: 3 is invalid: is not a known scope key (maximumKeys)',
      'policies.b.scope.maximumKeys: 2.5 is invalid: must be an integer >= 1 (the most keys a scope holds), at most 1000000',
      'policies.c.scope.maximumKeys: "100" is invalid: must be an integer >= 1 (the most keys a scope holds), at most 1000000',
    ]);
  });
});

describe('PolicyRegistry scopes and handle.for(key)', () => {
  it('owns a PolicyScope per scoped name; handle.for(key) returns the same keyed policy per key', () => {
    const { registry, billing } = create();
    const scope = registry.scope('billing')!;
    expect(scope).toBeInstanceOf(PolicyScope);
    expect(scope.maximumKeys).toBe(2);
    expect(registry.scope('search')!.maximumKeys).toBe(1024);
    expect(registry.scope('plain')).toBeUndefined();
    expect(() => registry.scope('nope')).toThrow(UnknownPolicyError);
    const a = billing.for('tenant-a');
    expect(billing.for('tenant-a')).toBe(a);
    expect(a).not.toBe(registry.get('billing'));
    expect(a.name).toBe('billing');
    expect(a.options.attempts).toBe(3);
    expect(scope.keys()).toEqual(['tenant-a']);
  });

  it('gives each key its own breaker and budget bucket, apart from the ones pinned to the name', async () => {
    const { clock, registry, billing } = create();
    const a = billing.for('a');
    const b = billing.for('b');
    await a.tryRun(down); // 3 attempts: 2 retries spent, a run of 3 failures
    const second = a.tryRun(down); // 2 more: 1 retry spent, the 5th failure opens a's breaker; the next retry is refused
    await clock.runAll();
    const refused = await second;
    expect(refused.reason).toBe('dependencyUnavailable');
    expect((refused.error as CallRejectedError).retryAfter).toBe(900); // the 1 s break (jitter none here) less the 100 ms guarded pause
    expect([a.breaker()!.state, b.breaker()!.state, registry.breaker('billing')!.state]).toEqual([
      'open',
      'closed',
      'closed',
    ]);
    expect(a.bucket()!.level).toBeCloseTo(27.3, 10); // 30 - 3 + 100 ms of the 3/s floor
    expect([b.bucket()!.level, registry.bucket('billing')!.level]).toEqual([30, 30]);
    expect(await b.run(up)).toBe('ok');
    expect(
      registry
        .scope('billing')!
        .entries()
        .map((e) => [e.key, e.breaker!.state]),
    ).toEqual([
      ['a', 'open'],
      ['b', 'closed'],
    ]);
  });

  it('keeps a budget.shared bucket shared by every key', async () => {
    const registry = PolicyRegistry.create({
      policies: {
        billing: {
          attempts: 2,
          backoff: { type: 'none' },
          budget: { shared: 'upstream' },
          scope: true,
        },
      },
      clock: new FakeClock(),
    });
    const billing = registry.handle('billing');
    await billing.for('a').tryRun(down);
    expect(billing.for('b').bucket()).toBe(billing.for('a').bucket());
    expect(billing.for('b').bucket()!.level).toBe(29);
  });

  it('evicts beyond maximumKeys: a returning key starts fresh', async () => {
    const { clock, billing, registry } = create();
    const a = billing.for('a');
    const calls = Promise.all([a.tryRun(down), a.tryRun(down)]);
    await clock.runAll();
    await calls;
    expect(a.breaker()!.state).toBe('open');
    billing.for('b');
    billing.for('c'); // evicts a (never looked up again)
    expect(registry.scope('billing')!.keys()).toEqual(['b', 'c']);
    expect(billing.for('a')).not.toBe(a);
    expect(billing.for('a').breaker()!.state).toBe('closed');
  });

  it('keeps keyed instances across a reload that leaves the name unchanged; keeps their state under the new settings when it changed', async () => {
    const { clock, registry, billing } = create();
    const a = billing.for('a');
    await a.tryRun(down);
    const second = a.tryRun(down);
    await clock.runAll();
    await second;
    expect(a.breaker()!.state).toBe('open');
    registry.reload({ policies: { ...policies, plain: { attempts: 3 } } });
    expect(billing.for('a')).toBe(a);
    expect(billing.for('a').breaker()!.state).toBe('open');
    const level = a.bucket()!.level;
    expect(level).toBeLessThan(30);
    const scope = registry.scope('billing');
    registry.reload({ policies: { ...policies, billing: { ...policies.billing, attempts: 2 } } });
    expect(registry.scope('billing')).toBe(scope);
    const adopted = billing.for('a');
    expect(adopted).not.toBe(a);
    expect([
      adopted.options.attempts,
      adopted.breaker(),
      adopted.breaker()!.state,
      adopted.bucket(),
      adopted.bucket()!.level,
    ]).toEqual([2, a.breaker(), 'open', a.bucket(), level]);
    const refusing = adopted.tryRun(up);
    await clock.advance(100);
    const refused = await refusing;
    expect([refused.reason, refused.attempts, (refused.error as CallRejectedError).reason]).toEqual(
      ['dependencyUnavailable', [], 'DependencyUnavailable'],
    );
    expect(registry.scope('billing')!.keys()).toEqual(['a']);
    // A new bound for the keys is a new scope: its keys start fresh.
    registry.reload({
      policies: {
        ...policies,
        billing: { ...policies.billing, attempts: 2, scope: { maximumKeys: 3 } },
      },
    });
    expect(registry.scope('billing')).not.toBe(scope);
    expect(billing.for('a').breaker()!.state).toBe('closed');
    registry.reload({ policies: { ...policies, billing: { attempts: 2 } } });
    expect(registry.scope('billing')).toBeUndefined();
  });

  it('handle.for(key) on a name without scope names the config field to set', async () => {
    const { registry } = create();
    const plain = registry.handle('plain');
    expect(() => plain.for('a')).toThrow(PolicyConfigError);
    expect(() => plain.for('a')).toThrow(
      'policies.plain.scope: undefined is invalid: must be true or { "maximumKeys": n } to use handle.for(key) (keyed policies)',
    );
    expect(() => registry.handle('nope').for('a')).toThrow(UnknownPolicyError);
    expect(() => registry.handle('billing').for(undefined as never)).toThrow(TypeError);
  });
});
