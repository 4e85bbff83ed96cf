import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { CircuitBreaker } from '../breaker/circuit-breaker.js';
import { BREAKER_DEFAULTS, SEED_BREAKER_SETTINGS } from '../breaker/breaker-settings.js';
import { CallRejectedError, PolicyConfigError } from '../errors.js';
import { FakeClock } from '../time/fake-clock.js';
import * as core from '../index.js';
import { Policy, Resilience } from './policy.js';
import { DEFAULT_MAXIMUM_KEYS, PolicyScope } from './policy-scope.js';
import { RetryBudget } from '../budget/retry-budget.js';

class Down extends Error {
  override name = 'Down';
}
const fail = () => Promise.reject(new Down('down'));
const succeed = () => Promise.resolve('ok');

function breakerTemplate(clock: FakeClock): Policy {
  return Resilience.default.with({
    name: 'billing',
    clock,
    random: () => 0.5,
    attempts: 1,
    budget: RetryBudget.none,
    backoff: Backoff.none,
    breaker: Breaker.with({ ...SEED_BREAKER_SETTINGS, jitter: 'none' }),
  });
}

function budgetTemplate(clock: FakeClock, budget = RetryBudget.automatic): Policy {
  return Resilience.default.with({
    name: 'billing',
    clock,
    attempts: 3,
    budget,
    backoff: Backoff.none,
  });
}

/** Inserts each key in turn (`for`) and returns the key each insertion evicted ('-' when none). */
function evictions(scope: PolicyScope<string>, steps: string[]): string[] {
  const out: string[] = [];
  for (const step of steps) {
    const before = scope.keys();
    scope.for(step);
    const gone = before.filter((k) => !scope.has(k));
    out.push(
      before.includes(step)
        ? `hit ${step}`
        : gone.length === 0
          ? `+${step}`
          : `+${step} -${gone.join(',')}`,
    );
  }
  return out;
}

describe('PolicyScope tells observers an instance it let go (CallObserver.retired)', () => {
  it('on eviction, delete and clear; an observer that throws changes nothing; a composed observer tells both', () => {
    const told: string[] = [];
    const template = Resilience.default
      .withListener({ retired: (policy) => told.push(`first ${policy.dependency?.host}`) })
      .withListener({
        retired: (policy) => {
          told.push(`second ${policy.dependency?.host}`);
          throw new Error('observer bug');
        },
      });
    const scope = new PolicyScope<string>(template, {
      maximumKeys: 2,
      label: (key) => ({ host: key }),
    });
    scope.for('a');
    scope.for('b');
    expect(told).toEqual([]);
    scope.for('c');
    expect(told).toEqual(['first a', 'second a']);
    expect([scope.delete('b'), scope.delete('b')]).toEqual([true, false]);
    scope.for('d');
    scope.clear();
    expect(told).toEqual([
      'first a',
      'second a',
      'first b',
      'second b',
      'first c',
      'second c',
      'first d',
      'second d',
    ]);
    expect(scope.size).toBe(0);
  });
});

describe('PolicyScope', () => {
  it('is exported from the core entry point with a 1024-key default', () => {
    expect(core.PolicyScope).toBe(PolicyScope);
    expect(DEFAULT_MAXIMUM_KEYS).toBe(1024);
    expect(new PolicyScope(Resilience.default).maximumKeys).toBe(1024);
  });

  describe('per-key state', () => {
    it('gives two keys independent breakers: one opens, the other stays closed and keeps running', async () => {
      const clock = new FakeClock();
      const template = breakerTemplate(clock);
      const scope = new PolicyScope<string>(template);
      const a = scope.for('tenant-a');
      const b = scope.for('tenant-b');
      for (let i = 0; i < 5; i++) expect((await a.tryRun(fail)).reason).toBe('attemptsExhausted');
      expect(a.breaker()!.state).toBe('open');
      expect(b.breaker()!.state).toBe('closed');
      expect(await b.run(succeed)).toBe('ok');

      const refused = a.tryRun(succeed);
      await clock.advance(100);
      const result = await refused;
      expect(result.reason).toBe('dependencyUnavailable');
      expect([
        (result.error as CallRejectedError).reason,
        (result.error as CallRejectedError).retryAfter,
      ]).toEqual(['DependencyUnavailable', 14_900]);
      expect(b.breaker()!.snapshot()).toMatchObject({
        state: 'closed',
        consecutiveFailures: 0,
        tripWindowCalls: 1,
        tripWindowFailures: 0,
      });
      expect(a.breaker()!.snapshot()).toMatchObject({
        state: 'open',
        breakMs: 15_000,
        breakRemaining: 14_900,
        consecutiveOpens: 1,
      });
      // The template's own breaker was never used by a key.
      expect(template.breaker()!.snapshot()).toMatchObject({ state: 'closed', tripWindowCalls: 0 });
      expect(a.breaker()).not.toBe(b.breaker());
    });

    it('gives two keys independent automatic budgets (exact levels after known sequences)', async () => {
      const clock = new FakeClock();
      const scope = new PolicyScope<string>(budgetTemplate(clock));
      const a = scope.for('a');
      const b = scope.for('b');
      expect(a.bucket()!.capacity).toBe(30);
      // a: one call failing 3 times spends 2 tokens (only retries spend); b untouched.
      expect((await a.tryRun(fail)).attempts).toHaveLength(3);
      expect([a.bucket()!.level, b.bucket()!.level]).toEqual([28, 30]);
      // a again: 26; b: a success deposits 0.1 but a full bucket stays at 30.
      await a.tryRun(fail);
      await b.run(succeed);
      expect([a.bucket()!.level, b.bucket()!.level]).toEqual([26, 30]);
      // a succeeds once: 26.1; 1 s later the 3/s floor has added 3: 29.1; b still 30.
      await a.run(succeed);
      expect(a.bucket()!.level).toBeCloseTo(26.1, 10);
      await clock.advance(1000);
      expect(a.bucket()!.level).toBeCloseTo(29.1, 10);
      expect(b.bucket()!.level).toBe(30);
      expect(a.bucket()!.utilization).toBeCloseTo(0.9 / 30, 10);
    });

    it('keeps explicitly shared state shared by every key: RetryBudget.of, .shared, .using and Breaker.using', async () => {
      const clock = new FakeClock();
      for (const budget of [
        RetryBudget.of(),
        RetryBudget.shared('policy-scope-spec'),
        RetryBudget.using(RetryBudget.of().resolve({}, clock)!),
      ]) {
        const scope = new PolicyScope<string>(budgetTemplate(clock, budget));
        await scope.for('a').tryRun(fail);
        expect(scope.for('b').bucket()).toBe(scope.for('a').bucket());
        expect(scope.for('b').bucket()!.level).toBe(28);
      }
      const pinned = new CircuitBreaker(BREAKER_DEFAULTS, { clock, random: () => 0.5 });
      const scope = new PolicyScope<string>(
        breakerTemplate(clock).with({ breaker: Breaker.using(pinned) }),
      );
      expect(scope.for('a').breaker()).toBe(pinned);
      expect(scope.for('b').breaker()).toBe(pinned);
    });
  });

  describe('for(key)', () => {
    it('returns the same instance for a cached key, a distinct one per key, never the template', () => {
      const scope = new PolicyScope<string>(Resilience.default.with({ name: 'billing' }));
      const a = scope.for('a');
      expect(scope.for('a')).toBe(a);
      expect(scope.for('b')).not.toBe(a);
      expect(a).not.toBe(scope.template);
      expect(a).toBeInstanceOf(Policy);
      expect(a.name).toBe('billing');
      expect(a.options).toBe(scope.template.options);
    });

    it('never allocates a new policy or calls shape again for a cached key', () => {
      const seen: string[] = [];
      const scope = new PolicyScope<string>(Resilience.default, {
        shape: (key, p) => (seen.push(key), p),
      });
      const a = scope.for('a');
      let other = 0;
      for (let i = 0; i < 10_000; i++) if (scope.for('a') !== a) other++;
      expect(other).toBe(0);
      expect(seen).toEqual(['a']);
      expect(scope.size).toBe(1);
    });

    it('calls shape once per key, with the key and the template, and runs the settings it returns', () => {
      const calls: [string, Policy][] = [];
      const premium = Resilience.default.with({ attempts: 5 });
      const template = Resilience.default.with({ name: 'billing' });
      const scope = new PolicyScope<string>(template, {
        shape: (key, policy) => {
          calls.push([key, policy]);
          return key.startsWith('premium-') ? premium : policy.with({ attempts: 2 });
        },
      });
      expect([
        scope.for('premium-1').options.attempts,
        scope.for('free-1').options.attempts,
        scope.for('premium-2').options.attempts,
      ]).toEqual([5, 2, 5]);
      scope.for('premium-1');
      scope.for('free-1');
      expect(calls.map(([key]) => key)).toEqual(['premium-1', 'free-1', 'premium-2']);
      expect(calls.every(([, policy]) => policy === template)).toBe(true);
      // A shared value returned by shape still gives every key its own instance (its own state).
      expect(scope.for('premium-1')).not.toBe(premium);
      expect(scope.for('premium-1')).not.toBe(scope.for('premium-2'));
      expect(scope.for('premium-1').bucket()).not.toBe(scope.for('premium-2').bucket());
    });

    it('rejects a shape result that is not a Policy, and caches nothing when shape fails', () => {
      let throwing = true;
      const scope = new PolicyScope<string>(Resilience.default, {
        shape: (key, p) => {
          if (key === 'bad') return { attempts: 2 } as unknown as Policy;
          if (throwing) throw new Error('no plan for this tenant');
          return p;
        },
      });
      expect(() => scope.for('bad')).toThrow(PolicyConfigError);
      expect(() => scope.for('bad')).toThrow(
        'shape: {"attempts":2} is invalid: must return a Policy for key bad (e.g. policy.with({ attempts: 5 }) or policy)',
      );
      expect(() => scope.for('x')).toThrow('no plan for this tenant');
      expect(scope.size).toBe(0);
      throwing = false;
      expect(scope.for('x')).toBeInstanceOf(Policy);
      expect(scope.size).toBe(1);
    });

    it('takes numbers and strings as distinct keys, compared by value', () => {
      const scope = new PolicyScope<string | number>(Resilience.default);
      const one = scope.for(1);
      expect(scope.for(1)).toBe(one);
      expect(scope.for('1')).not.toBe(one);
      expect(scope.keys()).toEqual([1, '1']);
    });

    it('refuses an undefined or null key', () => {
      const scope = new PolicyScope<string | undefined | null>(
        Resilience.default.with({ name: 'billing' }),
      );
      expect(() => scope.for(undefined)).toThrow(
        new TypeError('PolicyScope "billing": a key must not be undefined'),
      );
      expect(() => scope.for(null)).toThrow(TypeError);
      expect(scope.size).toBe(0);
    });
  });

  describe('eviction (clock sweep)', () => {
    it('evicts in second-chance order for a known access pattern', () => {
      const scope = new PolicyScope<string>(Resilience.default, { maximumKeys: 3 });
      expect(evictions(scope, ['a', 'b', 'c', 'a', 'd', 'd', 'e', 'a', 'f', 'g'])).toEqual([
        '+a',
        '+b',
        '+c',
        'hit a',
        '+d -b', // hand at a: referenced → cleared; b unreferenced → evicted, d takes its slot
        'hit d',
        '+e -c', // hand at c: unreferenced → evicted
        'hit a',
        '+f -e', // a and d referenced → cleared; e (never looked up again) → evicted
        '+g -a', // a's second chance was spent: evicted
      ]);
      expect(scope.keys()).toEqual(['d', 'f', 'g']);
      expect(scope.size).toBe(3);
    });

    it('a peek, has or entries reading does not count as a use', () => {
      const scope = new PolicyScope<string>(Resilience.default, { maximumKeys: 3 });
      evictions(scope, ['a', 'b', 'c']);
      expect(scope.peek('a')).toBe(scope.peek('a'));
      expect(scope.has('a')).toBe(true);
      scope.entries();
      expect(evictions(scope, ['d'])).toEqual(['+d -a']);
      expect(scope.peek('a')).toBeUndefined();
    });

    it('with every entry referenced, a sweep within the bound clears them all and evicts where it started', () => {
      const scope = new PolicyScope<string>(Resilience.default, { maximumKeys: 3 });
      expect(evictions(scope, ['a', 'b', 'c', 'a', 'b', 'c', 'd'])).toEqual([
        '+a',
        '+b',
        '+c',
        'hit a',
        'hit b',
        'hit c',
        '+d -a',
      ]);
      expect(scope.size).toBe(3);
    });

    it('bounds a sweep at 64 entries: beyond that the entry under the hand goes even if referenced', () => {
      const scope = new PolicyScope<number>(Resilience.default, { maximumKeys: 100 });
      for (let k = 0; k < 100; k++) scope.for(k);
      for (let k = 0; k < 100; k++) scope.for(k); // all referenced
      scope.for(100); // clears 0..63, evicts 64 (referenced) at the bound
      expect([scope.has(64), scope.has(63), scope.has(65), scope.size]).toEqual([
        false,
        true,
        true,
        100,
      ]);
      scope.for(101); // clears 65..99 (35 entries), reaches 0 (cleared by the first sweep): evicts it
      expect([scope.has(0), scope.has(1), scope.has(99), scope.size]).toEqual([
        false,
        true,
        true,
        100,
      ]);
    });

    it('stays within maximumKeys, consistent, and close to exact LRU under a long mixed workload', () => {
      let seed = 42;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const scope = new PolicyScope<number>(Resilience.default, { maximumKeys: 50 });
      const lru = new Map<number, true>();
      let [misses, lruMisses, inconsistent, oversize] = [0, 0, 0, 0];
      for (let i = 0; i < 5000; i++) {
        // 40 hot keys take 80 % of the lookups; the rest is a long cold tail.
        const key = next() < 0.8 ? Math.floor(next() * 40) : 40 + Math.floor(next() * 5000);
        const cached = scope.peek(key);
        const policy = scope.for(key);
        if (cached === undefined) misses++;
        else if (policy !== cached) inconsistent++;
        if (scope.size > 50) oversize++;
        if (lru.delete(key)) lru.set(key, true);
        else {
          lruMisses++;
          lru.set(key, true);
          if (lru.size > 50) lru.delete(lru.keys().next().value!);
        }
      }
      expect([inconsistent, oversize, scope.size, new Set(scope.keys()).size]).toEqual([
        0, 0, 50, 50,
      ]);
      // Pinned for this seed: the sweep misses less than exact LRU here (one-off keys enter unreferenced
      // and go first), and most hot keys are cached at the end.
      expect([misses, lruMisses]).toEqual([1521, 1736]);
      expect(Array.from({ length: 40 }, (_, k) => k).filter((k) => scope.has(k)).length).toBe(32);
    });

    it('an evicted key comes back fresh: a new instance, a closed breaker, a full budget', async () => {
      const clock = new FakeClock();
      const shaped: string[] = [];
      const scope = new PolicyScope<string>(
        breakerTemplate(clock).with({ budget: RetryBudget.automatic, attempts: 3 }),
        {
          maximumKeys: 1,
          shape: (key, p) => (shaped.push(key), p),
        },
      );
      const a = scope.for('a');
      await a.tryRun(fail); // 3 attempts, 2 retries spent
      const second = a.tryRun(fail); // 2 more attempts (1 more retry spent), the 5th failure opens the breaker
      await clock.runAll();
      expect((await second).reason).toBe('dependencyUnavailable');
      expect(a.breaker()!.state).toBe('open');
      expect(a.bucket()!.level).toBeCloseTo(27.3, 10); // 30 - 3 retries + 100 ms of the 3/s floor
      scope.for('b'); // evicts a
      expect(scope.keys()).toEqual(['b']);
      const again = scope.for('a'); // evicts b
      expect(again).not.toBe(a);
      expect(again.breaker()!.snapshot()).toMatchObject({
        state: 'closed',
        consecutiveOpens: 0,
        tripWindowCalls: 0,
      });
      expect(again.bucket()!.level).toBe(30);
      expect(shaped).toEqual(['a', 'b', 'a']);
      // The old instance keeps its state for calls still holding it.
      expect(a.breaker()!.state).toBe('open');
    });
  });

  describe('size, keys, delete, clear, entries', () => {
    it('keys() lists oldest first; delete frees a slot without evicting; clear forgets everything', () => {
      const scope = new PolicyScope<string>(Resilience.default, { maximumKeys: 3 });
      const a = scope.for('a');
      scope.for('b');
      scope.for('c');
      expect([scope.size, scope.keys()]).toEqual([3, ['a', 'b', 'c']]);
      expect(scope.delete('b')).toBe(true);
      expect(scope.delete('b')).toBe(false);
      expect(evictions(scope, ['d'])).toEqual(['+d']);
      expect(scope.keys()).toEqual(['a', 'c', 'd']);
      expect(evictions(scope, ['e'])).toEqual(['+e -a']);
      scope.clear();
      expect([scope.size, scope.keys()]).toEqual([0, []]);
      expect(scope.for('a')).not.toBe(a);
      expect(evictions(scope, ['b', 'c', 'd'])).toEqual(['+b', '+c', '+d -a']);
    });

    it('entries(limit) reads each key breaker and budget, capped at limit', async () => {
      const clock = new FakeClock();
      const scope = new PolicyScope<string>(
        breakerTemplate(clock).with({ budget: RetryBudget.automatic, attempts: 3 }),
      );
      await scope.for('a').tryRun(fail); // 3 attempts, 2 retries spent: level 28
      const second = scope.for('a').tryRun(fail); // 2 more attempts (1 spent: 27), the 5th failure opens it; the next retry is refused
      await clock.runAll();
      expect((await second).reason).toBe('dependencyUnavailable');
      await scope.for('b').run(succeed);
      scope.for('c');
      const entries = scope.entries(2);
      expect(entries.map((e) => e.key)).toEqual(['a', 'b']);
      expect(entries[0]!.policy).toBe(scope.peek('a'));
      expect(entries.map((e) => [e.breaker?.state, e.breaker?.breakRemaining])).toEqual([
        ['open', 14_900],
        ['closed', 0],
      ]);
      expect(entries[1]!.budgetUtilization).toBe(0);
      expect(entries[0]!.budgetUtilization).toBeCloseTo(2.7 / 30, 10); // level 27.3 of 30 (3 retries spent, 100 ms of floor)
      expect(scope.entries().map((e) => e.key)).toEqual(['a', 'b', 'c']);
      expect(scope.entries(0)).toEqual([]);
      const plain = new PolicyScope<string>(Resilience.default.with({ budget: RetryBudget.none }));
      plain.for('x');
      expect(plain.entries()).toEqual([
        { key: 'x', policy: plain.peek('x'), breaker: undefined, budgetUtilization: undefined },
      ]);
      expect(() => scope.entries(-1)).toThrow(
        'limit: -1 is invalid: must be an integer >= 0 (or Infinity)',
      );
      expect(() => scope.entries(1.5)).toThrow(
        'limit: 1.5 is invalid: must be an integer >= 0 (or Infinity)',
      );
      expect(scope.entries(Infinity).map((e) => e.key)).toEqual(['a', 'b', 'c']);
    });
  });

  describe('options', () => {
    it.each([
      [0, 'maximumKeys: 0 is invalid: must be an integer >= 1 (the most keys a scope holds)'],
      [-5, 'maximumKeys: -5 is invalid: must be an integer >= 1 (the most keys a scope holds)'],
      [1.5, 'maximumKeys: 1.5 is invalid: must be an integer >= 1 (the most keys a scope holds)'],
      [
        Number.NaN,
        'maximumKeys: NaN is invalid: must be an integer >= 1 (the most keys a scope holds)',
      ],
      [
        Infinity,
        'maximumKeys: Infinity is invalid: must be an integer >= 1 (the most keys a scope holds)',
      ],
      ['10', 'maximumKeys: "10" is invalid: must be an integer >= 1 (the most keys a scope holds)'],
    ])('rejects maximumKeys %p', (value, message) => {
      const make = () => new PolicyScope(Resilience.default, { maximumKeys: value as number });
      expect(make).toThrow(PolicyConfigError);
      expect(make).toThrow(message);
      try {
        make();
      } catch (error) {
        expect([(error as PolicyConfigError).field, (error as PolicyConfigError).value]).toEqual([
          'maximumKeys',
          value,
        ]);
      }
    });

    it('rejects a non-Policy template, a non-function shape and unknown options', () => {
      expect(() => new PolicyScope({} as Policy)).toThrow(
        'template: {} is invalid: must be a Policy (e.g. Resilience.http.with({ name }))',
      );
      expect(() => new PolicyScope(Resilience.default, { shape: 'premium' as never })).toThrow(
        'shape: "premium" is invalid: must be a function (key, policy) => Policy',
      );
      expect(() => new PolicyScope(Resilience.default, { maxKeys: 10 } as never)).toThrow(
        'maxKeys: 10 is invalid: is not a known scope option (maximumKeys, shape, label)',
      );
      expect(new PolicyScope(Resilience.default, { maximumKeys: 1 }).maximumKeys).toBe(1);
    });
  });
  describe('adopt (new settings, as a config reload gives)', () => {
    it('keeps each key its breaker and bucket under the new settings: an open breaker stays open until its break ends, then follows the new break', async () => {
      const clock = new FakeClock();
      const template = breakerTemplate(clock).with({ budget: RetryBudget.automatic });
      const scope = new PolicyScope<string>(template);
      const a = scope.for('a');
      for (let i = 0; i < 5; i++) await a.tryRun(fail);
      expect(a.breaker()!.snapshot()).toMatchObject({ state: 'open', breakMs: 15_000 });
      await clock.advance(5_000);
      const next = template.with({
        attempts: 2,
        breaker: template.options.breaker!.with({ breakDuration: 40_000, maximumBreak: 40_000 }),
      });
      scope.adopt(next);
      expect(scope.template).toBe(next);
      const adopted = scope.for('a');
      expect(adopted).not.toBe(a);
      expect([adopted.options.attempts, adopted.breaker(), adopted.bucket()]).toEqual([
        2,
        a.breaker(),
        a.bucket(),
      ]);
      expect(adopted.breaker()!.snapshot()).toMatchObject({
        state: 'open',
        breakMs: 15_000,
        breakRemaining: 10_000,
      });
      expect(adopted.breaker()!.settings.breakDuration).toBe(40_000);
      scope.adopt(next);
      expect(scope.for('a')).toBe(adopted);
      await clock.advance(10_000);
      expect(adopted.breaker()!.state).toBe('halfOpen');
      await adopted.tryRun(fail, { attempts: 1 });
      expect(adopted.breaker()!.snapshot()).toMatchObject({ state: 'open', breakMs: 40_000 });
      // A key first seen after adopt starts from the new settings.
      expect(scope.for('b').breaker()!.settings.breakDuration).toBe(40_000);
    });

    it("reports a kept breaker's transitions to the listeners of the key's current instance", async () => {
      const clock = new FakeClock();
      const template = breakerTemplate(clock);
      const scope = new PolicyScope<string>(template);
      const a = scope.for('a');
      for (let i = 0; i < 5; i++) await a.tryRun(fail);
      const heard: string[] = [];
      scope.adopt(
        template.withListener(
          (event) => void (event.kind.startsWith('breaker') && heard.push(event.kind)),
        ),
      );
      await clock.advance(15_000);
      expect(scope.for('a').breaker()!.state).toBe('halfOpen');
      expect(heard).toEqual(['breakerHalfOpened']);
    });

    it('a budget that changes kind starts fresh; a removed breaker is gone; explicitly shared state stays shared', async () => {
      const clock = new FakeClock();
      const template = budgetTemplate(clock);
      const scope = new PolicyScope<string>(template);
      await scope.for('a').tryRun(fail);
      expect(scope.for('a').bucket()!.level).toBe(28);
      scope.adopt(template.with({ budget: RetryBudget.automaticWith({ fraction: 0.2 }) }));
      expect(scope.for('a').bucket()!.level).toBe(28);
      scope.adopt(template.with({ budget: RetryBudget.slidingWindow() }));
      expect(scope.for('a').bucket()!.utilization).toBe(0);
      const shared = RetryBudget.of({});
      scope.adopt(template.with({ budget: shared, breaker: Breaker.default }));
      expect(scope.for('a').bucket()).toBe(template.with({ budget: shared }).bucket());
      expect(scope.for('a').breaker()).toBeDefined();
      scope.adopt(template.with({ budget: shared, breaker: undefined }));
      expect(scope.for('a').breaker()).toBeUndefined();
    });

    it('a shape that throws leaves every key and the template as they were; a non-Policy is refused', () => {
      const clock = new FakeClock();
      const template = budgetTemplate(clock);
      let fails = false;
      const scope = new PolicyScope<string>(template, {
        shape: (_key, policy) =>
          fails
            ? (() => {
                throw new Error('no shape');
              })()
            : policy,
      });
      const a = scope.for('a');
      fails = true;
      expect(() => scope.adopt(template.with({ attempts: 2 }))).toThrow('no shape');
      expect([scope.template, scope.for('a')]).toEqual([template, a]);
      expect(() => scope.adopt({} as Policy)).toThrow('template: {} is invalid: must be a Policy');
    });
  });
});

describe('PolicyScope keeps a key’s limit across eviction and new settings', () => {
  /** A template limited to 2 calls in flight per key, no queue; calls that wait until released. */
  function limited(clock: FakeClock) {
    const template = Resilience.default.with({
      name: 'hosts',
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      limit: core.Limit.concurrency(2),
    });
    const releases: (() => void)[] = [];
    const hang = () => new Promise<string>((resolve) => releases.push(() => resolve('done')));
    return { template, releases, hang };
  }

  it('a key evicted with calls in flight comes back with their slots held: the third call is refused, not started', async () => {
    const clock = new FakeClock();
    const { template, releases, hang } = limited(clock);
    const scope = new PolicyScope<string>(template, { maximumKeys: 1 });
    const first = scope.for('a').run(hang);
    const second = scope.for('a').run(hang);
    await clock.advance(0);
    scope.for('b'); // evicts 'a', whose two calls are still running
    expect([scope.has('a'), scope.size]).toEqual([false, 1]);
    let started = 0;
    const third = scope.for('a').tryRun(() => {
      started++;
      return 'third';
    });
    await clock.advance(100); // the guarded pause before a refusal
    expect([(await third).reason, started]).toEqual(['limited', 0]);
    expect(scope.for('a').limiter()?.snapshot()).toMatchObject({ inflight: 2 });
    for (const release of releases) release();
    await expect(Promise.all([first, second])).resolves.toEqual(['done', 'done']);
    expect(scope.for('a').limiter()?.snapshot()).toMatchObject({ inflight: 0 });
  });

  it('an idle evicted key starts fresh, and a busy one is let go once its calls end: maximumKeys bounds the keys, in-flight calls the limiters kept', async () => {
    const clock = new FakeClock();
    const { template, releases, hang } = limited(clock);
    const scope = new PolicyScope<string>(template, { maximumKeys: 1 });
    const idle = scope.for('a');
    await idle.run(() => 'x');
    const idleLimiter = idle.limiter();
    scope.for('b');
    expect(scope.for('a').limiter()).not.toBe(idleLimiter);
    const busy = scope.for('a').run(hang);
    await clock.advance(0);
    const busyLimiter = scope.for('a').limiter();
    scope.for('b');
    expect(scope.keptLimiters).toBe(1);
    releases.shift()!();
    await busy;
    scope.for('c'); // a new key looks over the kept limiters: 'a' is idle now, let go
    expect(scope.keptLimiters).toBe(0);
    expect(scope.for('a').limiter()).not.toBe(busyLimiter);
  });

  it('limiters kept for busy keys are dropped once their calls end, though no new key comes', async () => {
    const clock = new FakeClock();
    const { template, releases, hang } = limited(clock);
    const scope = new PolicyScope<string>(template, { maximumKeys: 1 });
    const calls = Array.from({ length: 50 }, (_, i) => scope.for(`tenant-${i}`).run(hang));
    await clock.advance(0);
    expect(scope.keptLimiters).toBe(49); // the 49 keys let go with a call in flight
    for (const release of releases) release();
    await Promise.all(calls);
    expect(scope.keptLimiters).toBe(0);
  });

  it('new settings (adopt) keep each key’s limiter, its calls in flight and its queue, resized', async () => {
    const clock = new FakeClock();
    const { template, releases, hang } = limited(clock);
    const scope = new PolicyScope<string>(template);
    const calls = [scope.for('a').run(hang), scope.for('a').run(hang)];
    await clock.advance(0);
    const before = scope.for('a').limiter();
    scope.adopt(template.with({ limit: core.Limit.concurrency(3) }));
    expect(scope.for('a').limiter()).toBe(before);
    expect(scope.for('a').limiter()?.snapshot()).toMatchObject({ limit: 3, inflight: 2 });
    let started = 0;
    const more = [1, 2].map(() =>
      scope.for('a').tryRun(() => {
        started++;
        return 'more';
      }),
    );
    await clock.advance(100);
    expect([started, (await more[1]!).reason]).toEqual([1, 'limited']);
    for (const release of releases) release();
    await Promise.all(calls);
  });
});
