import { describe, expect, it } from '@jest/globals';
import {
  BREAKER_DEFAULTS,
  Classifier,
  FakeClock,
  Resilience,
  SlidingWindowBudget,
} from '../core/index.js';
import { PinnedPolicies } from './pinned-policies.js';
import { parseResilienceConfig } from './policy-config.js';
import { problemsOf } from '../../test/support/config-problems.js';

function pinned(config: unknown, clock = new FakeClock()): PinnedPolicies {
  const policies = new PinnedPolicies({ clock });
  policies.apply(parseResilienceConfig(config));
  return policies;
}

describe('Resilience.conservative', () => {
  it('2 attempts, the automatic budget, a breaker floored at a 50 % failure ratio, Classifier.http', () => {
    const o = Resilience.conservative.options;
    expect([o.attempts, o.budget.kind, o.deadline, o.classifier]).toEqual([
      2,
      'automatic',
      undefined,
      Classifier.http,
    ]);
    expect(o.breaker!.settings).toEqual({
      ...BREAKER_DEFAULTS,
      minimumErrorRate: 0.5,
      consecutiveFailures: 20,
    });
  });
});

describe('presets, extends and defaults in config', () => {
  it("preset: 'conservative' and extends: 'http' start from those presets", () => {
    const policies = pinned({
      policies: { fan: { preset: 'conservative' }, api: { extends: 'http', attempts: 2 } },
    });
    expect(policies.describe('fan')).toMatchObject({
      preset: 'conservative',
      extends: [],
      attempts: 2,
      deadline: null,
      breaker: { minimumErrorRate: 0.5, consecutiveFailures: 20 },
    });
    expect(policies.describe('api')).toMatchObject({
      preset: 'http',
      extends: [],
      attempts: 2,
      deadline: 30_000,
      breaker: { minimumErrorRate: 0.05 },
    });
    expect(policies.get('api')!.options.classifier).toBe(Classifier.http);
  });

  it('extends another policy: defaults, then the ancestors nearest last, then its own settings', () => {
    const policies = pinned({
      defaults: { attempts: 4, backoff: { transientBase: '50ms' }, budget: { fraction: 0.2 } },
      policies: {
        base: {
          extends: 'http',
          deadline: '5s',
          backoff: { factor: 3 },
          breaker: { breakDuration: '20s' },
        },
        payments: { extends: 'base', attempts: 2, breaker: { consecutiveFailures: 8 } },
        refunds: { extends: 'payments', deadline: null },
      },
    });
    expect(policies.describe('refunds')).toEqual({
      name: 'refunds',
      preset: 'http',
      extends: ['payments', 'base'],
      attempts: 2,
      deadline: null,
      attemptTimeout: null,
      useAmbientDeadline: false,
      useAmbientCriticality: false,
      backoff: {
        type: 'exponential',
        transientBase: 50,
        throttledBase: 1000,
        factor: 3,
        maximumDelay: 30_000,
        jitter: 'full',
      },
      budget: { fraction: 0.2, minimumPerSecond: 3, adaptive: true },
      // maximumBreak unset follows a longer breakDuration (no doubling); the explicit run of 8 is taken
      // literally (streakSignificance 1, no floor: DESIGN §3.6).
      breaker: {
        ...BREAKER_DEFAULTS,
        breakDuration: 20_000,
        maximumBreak: 20_000,
        consecutiveFailures: 8,
        streakSignificance: 1,
        failureRateFloor: 0,
        recovery: false,
      },
      scope: false,
      limit: false,
      saturation: false,
      hedge: false,
      attemptCeiling: { multiple: 3, quantile: 0.95 }, // the http preset's
      adaptive: true,
      classifier: 'http', // the http preset's
    });
    expect(policies.describe('base')).toMatchObject({ attempts: 4, deadline: 5000, extends: [] });
  });

  it('refuses cycles, unknown targets and preset beside extends, naming the path', () => {
    expect(
      problemsOf({
        policies: {
          a: { extends: 'b' },
          b: { extends: 'a' },
          c: { extends: 'nowhere' },
          d: { preset: 'http', extends: 'a' },
          e: { preset: 'fast' },
          f: { extends: 'f' },
        },
      }),
    ).toEqual([
      'policies.d.extends: "a" is invalid: cannot be given with preset: extends names the starting point',
      'policies.e.preset: "fast" is invalid: must be one of default, http, conservative',
      'policies.b.extends: "a" is invalid: forms a cycle: a -> b -> a',
      'policies.c.extends: "nowhere" is invalid: must be a preset (default, http, conservative) or the name of another policy (a, b, d, e, f)',
      'policies.f.extends: "f" is invalid: forms a cycle: f -> f',
    ]);
  });

  it('a policy named like a preset is what extends refers to', () => {
    const policies = pinned({ policies: { http: { attempts: 5 }, client: { extends: 'http' } } });
    expect(policies.describe('client')).toMatchObject({
      preset: 'default',
      extends: ['http'],
      attempts: 5,
      breaker: false,
    });
  });
});

describe('sliding-window budgets in config', () => {
  it('budget { retryRatio, samplingDuration, minimumThroughput } builds a window pinned to the name, kept across reloads', () => {
    const clock = new FakeClock();
    const policies = pinned(
      {
        policies: {
          search: { budget: { retryRatio: 0.05, samplingDuration: '1m', minimumThroughput: 20 } },
        },
      },
      clock,
    );
    const window = policies.get('search')!.bucket() as SlidingWindowBudget;
    expect(window).toBeInstanceOf(SlidingWindowBudget);
    expect(policies.describe('search')!.budget).toEqual({
      retryRatio: 0.05,
      samplingDuration: 60_000,
      minimumThroughput: 20,
    });
    for (let i = 0; i < 30; i++) window.recordCall();
    policies.apply(
      parseResilienceConfig({
        policies: {
          search: { budget: { retryRatio: 0.1, samplingDuration: '1m', minimumThroughput: 20 } },
        },
      }),
    );
    expect(policies.get('search')!.bucket()).toBe(window);
    expect(window.window.calls).toBe(30);
    expect(window.capacity).toBeCloseTo(3, 10);
  });

  it('a window under a token-bucket default replaces it; mixing both shapes in one object is refused', () => {
    const policies = pinned({
      defaults: { budget: { fraction: 0.2 } },
      policies: { a: { budget: { retryRatio: 0.1 } }, b: {} },
    });
    expect([policies.describe('a')!.budget, policies.describe('b')!.budget]).toEqual([
      { retryRatio: 0.1, samplingDuration: 30_000, minimumThroughput: 100 },
      { fraction: 0.2, minimumPerSecond: 3, adaptive: true },
    ]);
    expect(
      problemsOf({
        policies: {
          a: { budget: { fraction: 0.1, retryRatio: 0.1 } },
          b: { budget: { retryRatio: 2, samplingDuration: 'soon', minimumThroughput: 0 } },
          c: { budget: { retryRatio: 0.1, shared: 'all' } },
        },
      }),
    ).toEqual([
      'policies.a.budget: {"fraction":0.1,"retryRatio":0.1} is invalid: mixes token-bucket keys (fraction) with sliding-window keys (retryRatio, samplingDuration, minimumThroughput): choose one shape',
      'policies.b.budget.retryRatio: 2 is invalid: must be a number in [0, 1] (retries per logical call)',
      'policies.b.budget.samplingDuration: "soon" is invalid: must be a duration in ms from 1000 (1 s) to 86400000 (1 day), written as a ms number or a string such as "250ms", "10s", "2m"',
      'policies.b.budget.minimumThroughput: 0 is invalid: must be an integer >= 1 (logical calls in the window)',
      'policies.c.budget: {"retryRatio":0.1,"shared":"all"} is invalid: mixes token-bucket keys (shared) with sliding-window keys (retryRatio, samplingDuration, minimumThroughput): choose one shape',
    ]);
  });
});
