import { describe, expect, it } from '@jest/globals';
import { Resilience } from '../core/index.js';
import { parseDuration, parseResilienceConfig } from './policy-config.js';
import { problemsOf } from '../../test/support/config-problems.js';

describe('parseDuration', () => {
  it.each([
    [250, 250],
    ['250ms', 250],
    ['10s', 10_000],
    ['2m', 120_000],
    ['1.5s', 1500],
    [' 3s ', 3000],
    ['250', 250],
    [0, 0],
  ])('reads %j as %d ms', (value, expected) => {
    expect(parseDuration(value, 'deadline')).toBe(expected);
  });

  it.each([-1, '-1s', 'soon', '10 parsecs', '', NaN, Infinity, true, null])(
    'refuses %j naming the field and the rule',
    (value) => {
      expect(() => parseDuration(value, 'policies.a.deadline')).toThrow(
        /^policies\.a\.deadline: .* is invalid: must be a finite duration in ms >= 0, written as a ms number or a string such as "250ms", "10s", "2m"$/,
      );
    },
  );

  it('refuses 0 when a positive duration is required', () => {
    expect(() => parseDuration('0ms', 'deadline', { positive: true })).toThrow(
      'deadline: "0ms" is invalid: must be a finite duration in ms > 0,',
    );
  });
});

describe('parseResilienceConfig', () => {
  it('maps every field onto the preset', () => {
    const { policies } = parseResilienceConfig({
      policies: {
        payments: {
          preset: 'http',
          attempts: 4,
          attemptTimeout: '2s',
          backoff: {
            transientBase: '50ms',
            throttledBase: '2s',
            factor: 3,
            maximumDelay: '1m',
            jitter: 'equal',
          },
          budget: { fraction: 0.2, minimumPerSecond: 5 },
        },
      },
    });
    const plan = policies.get('payments')!;
    expect(plan.preset).toBe(Resilience.http);
    expect(plan.changes).toMatchObject({ attempts: 4, attemptTimeout: 2000 });
    expect(plan.changes.backoff).toMatchObject({
      transientBase: 50,
      throttledBase: 2000,
      factor: 3,
      maximumDelay: 60_000,
    });
    expect(plan.budget).toEqual({
      kind: 'private',
      options: { fraction: 0.2, minimumPerSecond: 5 },
    });
    const policy = plan.preset.with(plan.changes);
    expect(policy.options.deadline).toBe(30_000);
    expect(policy.options.attempts).toBe(4);
  });

  it('reads the other backoff and budget shapes', () => {
    const { policies } = parseResilienceConfig({
      policies: {
        a: { backoff: { type: 'constant', delay: '1s' }, budget: false },
        b: { backoff: { type: 'none' }, budget: 'none' },
        c: { budget: true },
        d: { budget: { shared: 'downstream' } },
        e: {},
      },
    });
    expect(policies.get('a')!.changes.backoff).toMatchObject({ delay: 1000, maximumDelay: 1000 });
    expect(policies.get('a')!.budget).toEqual({ kind: 'none' });
    expect(policies.get('b')!.changes.backoff!.compute({} as never)).toBe(0);
    expect(policies.get('b')!.budget).toEqual({ kind: 'none' });
    expect(policies.get('c')!.budget).toEqual({
      kind: 'private',
      options: { fraction: 0.1, minimumPerSecond: 3 },
    });
    expect(policies.get('d')!.budget).toEqual({
      kind: 'shared',
      sharedName: 'downstream',
      options: { fraction: 0.1, minimumPerSecond: 3 },
    });
    expect(policies.get('e')!.budget.kind).toBe('private');
    expect(policies.get('e')!.preset).toBe(Resilience.default);
    expect([...policies.keys()]).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('merges defaults under every policy; null removes a bound', () => {
    const { policies } = parseResilienceConfig({
      defaults: {
        attempts: 2,
        deadline: '5s',
        backoff: { transientBase: 10, jitter: 'none' },
        budget: { fraction: 0.5 },
      },
      policies: {
        a: { backoff: { maximumDelay: 40 }, budget: { minimumPerSecond: 1 } },
        b: { attempts: 5, deadline: null, backoff: { type: 'constant', delay: 7 }, budget: false },
      },
    });
    const a = policies.get('a')!;
    expect(a.changes).toMatchObject({ attempts: 2, deadline: 5000 });
    expect(a.changes.backoff).toMatchObject({ transientBase: 10, maximumDelay: 40 });
    expect(a.budget).toEqual({ kind: 'private', options: { fraction: 0.5, minimumPerSecond: 1 } });
    const b = policies.get('b')!;
    expect(b.changes.attempts).toBe(5);
    expect('deadline' in b.changes && b.changes.deadline === undefined).toBe(true);
    expect(b.changes.backoff).toMatchObject({ delay: 7 });
    expect(b.budget).toEqual({ kind: 'none' });
  });

  it('reads useAmbientDeadline as a boolean and names a bad one', () => {
    const plan = parseResilienceConfig({
      policies: { api: { useAmbientDeadline: true } },
    }).policies.get('api')!;
    expect(plan.changes.useAmbientDeadline).toBe(true);
    expect(problemsOf({ policies: { api: { useAmbientDeadline: 'yes' } } })).toEqual([
      'policies.api.useAmbientDeadline: "yes" is invalid: must be true or false',
    ]);
  });

  it('reads restarts (checkpointed streams) and names a bad one', () => {
    const plan = parseResilienceConfig({
      defaults: { restarts: 5 },
      policies: { feed: {}, once: { restarts: 0 } },
    }).policies;
    expect(plan.get('feed')!.changes.restarts).toBe(5);
    expect(plan.get('once')!.changes.restarts).toBe(0);
    expect(problemsOf({ policies: { feed: { restarts: 1.5 } } })).toEqual([
      'policies.feed.restarts: 1.5 is invalid: must be an integer in [0, 100] (restarts of a checkpointed stream)',
    ]);
  });

  it('names the full path, the value and the allowed range', () => {
    expect(problemsOf({ policies: { payments: { budget: { fraction: 1.5 } } } })).toEqual([
      'policies.payments.budget.fraction: 1.5 is invalid: must be a number in [0, 1]',
    ]);
  });

  it('refuses a fallback in a policy or in defaults, saying it is code, not config', () => {
    expect(
      problemsOf({
        defaults: { fallback: 'cachedPrices' },
        policies: { prices: { attempts: 2, fallback: { method: 'cachedPrices' } } },
      }),
    ).toEqual([
      `defaults.fallback: "cachedPrices" is invalid: is code, not config: policy.with({ fallback: (stop) => value }), or @Resilient(name, { fallback: 'method' }) in Nest`,
      `policies.prices.fallback: {"method":"cachedPrices"} is invalid: is code, not config: policy.with({ fallback: (stop) => value }), or @Resilient(name, { fallback: 'method' }) in Nest`,
    ]);
  });

  it('reports every problem, unknown keys included, each with its path', () => {
    const problems = problemsOf({
      policies: {
        payments: {
          attempts: 0,
          deadline: '-5s',
          retries: 3,
          backoff: { type: 'exponential', factor: 0.5, jitter: 'some', base: 1 },
          budget: { fraction: -1, minimumPerSecond: 'lots', share: 'x' },
        },
        search: { preset: 'grpc', attemptTimeout: 0, backoff: { type: 'linear' } },
        orders: 'fast',
      },
      extra: true,
    });
    expect(problems).toEqual([
      'extra: true is invalid: is not a known resilience config key (policies, defaults)',
      'policies.payments.retries: 3 is invalid: is not a known policy key (preset, extends, attempts, deadline, attemptTimeout, backoff, budget, breaker, scope, useAmbientDeadline, useAmbientCriticality, classifier, limit, hedge, repeatable, saturation, attemptCeiling, adaptive, restarts)',
      'policies.payments.attempts: 0 is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
      'policies.payments.deadline: "-5s" is invalid: must be a duration in ms > 0 (Infinity, or leaving it out, for no bound), written as a ms number or a string such as "250ms", "10s", "2m"',
      'policies.payments.backoff.base: 1 is invalid: is not a known exponential backoff key (type, transientBase, throttledBase, factor, maximumDelay, jitter)',
      'policies.payments.backoff.factor: 0.5 is invalid: must be a finite number >= 1',
      `policies.payments.backoff.jitter: "some" is invalid: must be 'full', 'equal' or 'none'`,
      'policies.payments.budget.share: "x" is invalid: is not a known budget key (fraction, minimumPerSecond, shared, retryRatio, samplingDuration, minimumThroughput)',
      'policies.payments.budget.fraction: -1 is invalid: must be a number in [0, 1]',
      'policies.payments.budget.minimumPerSecond: "lots" is invalid: must be 0 (no floor) or a number of tokens per second in [0.00001157 (one a day), 1000000]',
      `policies.search.preset: "grpc" is invalid: must be one of default, http, conservative`,
      'policies.search.attemptTimeout: 0 is invalid: must be a duration in ms > 0 (Infinity, or leaving it out, for no bound), written as a ms number or a string such as "250ms", "10s", "2m"',
      `policies.search.backoff.type: "linear" is invalid: must be 'exponential', 'measured', 'constant' or 'none'`,
      'policies.orders: "fast" is invalid: must be an object with the policy keys (preset, extends, attempts, deadline, attemptTimeout, backoff, budget, breaker, scope, useAmbientDeadline, useAmbientCriticality, classifier, limit, hedge, repeatable, saturation, attemptCeiling, adaptive, restarts)',
    ]);
  });

  it('reports a cross-field breaker mistake in defaults once, at defaults.breaker, with or without policies', () => {
    const rule =
      'defaults.breaker.maximumBreak: 250 is invalid: must be a finite duration in ms >= breakDuration (1000)';
    expect(
      problemsOf({
        defaults: { breaker: { maximumBreak: 250 } },
        policies: { a: {}, b: { breaker: true } },
      }),
    ).toEqual([rule]);
    expect(problemsOf({ defaults: { breaker: { maximumBreak: 250 } }, policies: {} })).toEqual([
      rule,
    ]);
    expect(
      problemsOf({
        defaults: { breaker: { breakDuration: '2s', maximumBreak: '1s' } },
        policies: { a: {} },
      }),
    ).toEqual([
      'defaults.breaker.maximumBreak: 1000 is invalid: must be a finite duration in ms >= breakDuration (2000)',
    ]);
    // A policy's own settings that break the rule once merged over valid defaults are still its own.
    expect(
      problemsOf({
        defaults: { breaker: { breakDuration: '2s' } },
        policies: { a: { breaker: { maximumBreak: '1s' } } },
      }),
    ).toEqual([
      'policies.a.breaker.maximumBreak: 1000 is invalid: must be a finite duration in ms >= breakDuration (2000)',
    ]);
  });

  it('accepts attemptTimeout and deadline Infinity as no bound, as leaving them out; 0 still refused, saying how to write no bound', () => {
    const parsed = parseResilienceConfig({
      defaults: { attemptTimeout: '2s' },
      policies: { open: { attemptTimeout: Infinity, deadline: Infinity } },
    });
    const policy = Resilience.default.with(parsed.policies.get('open')!.changes);
    expect([policy.options.attemptTimeout, policy.options.deadline]).toEqual([
      undefined,
      undefined,
    ]);
    expect(
      Resilience.default.with({ attemptTimeout: 500 }).with({ attemptTimeout: Infinity }).options
        .attemptTimeout,
    ).toBeUndefined();
    expect(() => Resilience.default.with({ attemptTimeout: 0 })).toThrow(
      'attemptTimeout: 0 is invalid: must be a duration in ms > 0 (Infinity, or leaving it out, for no bound)',
    );
    expect(() => Resilience.default.with({ deadline: Number.NaN })).toThrow(
      'deadline: NaN is invalid: must be a duration in ms > 0 (Infinity, or leaving it out, for no bound)',
    );
  });

  it('reports a bad default once, at its defaults path', () => {
    expect(problemsOf({ defaults: { attempts: 1.5 }, policies: { a: {}, b: {} } })).toEqual([
      'defaults.attempts: 1.5 is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
    ]);
  });

  it('refuses a missing policies object, a constant backoff without delay and conflicting shared budgets', () => {
    expect(problemsOf({})).toEqual([
      'policies: undefined is invalid: must be an object of named policies, e.g. { "payments": { "attempts": 3 } }',
    ]);
    expect(problemsOf({ policies: { a: { backoff: { type: 'constant' } } } })[0]).toMatch(
      /^policies\.a\.backoff\.delay: undefined is invalid: is required/,
    );
    expect(
      problemsOf({
        policies: {
          a: { budget: { shared: 'x', fraction: 0.1 } },
          b: { budget: { shared: 'x', fraction: 0.3 } },
        },
      })[0],
    ).toMatch(
      /^policies\.b\.budget: .* conflicts with policies\.a\.budget \{"fraction":0\.1,"minimumPerSecond":3\}/,
    );
    expect(problemsOf(null)).toEqual([
      'config: null is invalid: must be an object { policies, defaults? }',
    ]);
  });
});
