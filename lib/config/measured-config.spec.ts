import { describe, expect, it } from '@jest/globals';
import { FakeClock, MeasuredBackoff } from '../core/index.js';
import { PinnedPolicies } from './pinned-policies.js';
import { parseResilienceConfig } from './policy-config.js';
import { problemsOf } from '../../test/support/config-problems.js';

describe('measured terms in config', () => {
  it('reads attemptCeiling, adaptive and a measured backoff; the http preset has the ceiling, false removes it', () => {
    const policies = new PinnedPolicies({ clock: new FakeClock() });
    policies.apply(
      parseResilienceConfig({
        defaults: { attemptCeiling: { multiple: 4 } },
        policies: {
          prices: { backoff: { type: 'measured', multiple: 2, transientBase: '50ms' } },
          http: { preset: 'http', attemptCeiling: true },
          plain: { preset: 'http', attemptCeiling: false, adaptive: false },
        },
      }),
    );
    expect(policies.describe('prices')).toMatchObject({
      attemptCeiling: { multiple: 4, quantile: 0.95 },
      adaptive: true,
      backoff: { type: 'measured', multiple: 2, quantile: 0.5, spread: 10, transientBase: 50 },
    });
    expect(policies.get('prices')!.options.backoff).toBeInstanceOf(MeasuredBackoff);
    expect(policies.describe('http')).toMatchObject({
      attemptCeiling: { multiple: 3, quantile: 0.95 },
    });
    expect(policies.describe('plain')).toMatchObject({ attemptCeiling: false, adaptive: false });
    expect(policies.get('plain')!.measurements()).toBeUndefined();
  });

  it('pins what was measured to the name: a reload keeps it and takes the new settings; the ceiling and the backoff share it', () => {
    const clock = new FakeClock();
    const policies = new PinnedPolicies({ clock });
    policies.apply(
      parseResilienceConfig({
        policies: { prices: { attemptCeiling: true, backoff: { type: 'measured' } } },
      }),
    );
    const state = policies.get('prices')!.measurements()!;
    for (let i = 0; i < 100; i++) state.latency.add(0, 40);
    policies.apply(
      parseResilienceConfig({
        policies: {
          prices: { attemptCeiling: { multiple: 2 }, backoff: { type: 'measured' }, attempts: 4 },
        },
      }),
    );
    const after = policies.get('prices')!;
    expect(after.measurements()).toBe(state);
    expect(after.measured.attemptCeiling).toBeCloseTo(2 * 40, -1);
    expect(after.measured.backoffBase).toBeCloseTo(40, -1);
    // A measured backoff alone is pinned too.
    policies.apply(
      parseResilienceConfig({ policies: { prices: { backoff: { type: 'measured' } } } }),
    );
    expect(policies.get('prices')!.measurements()).toBe(state);
  });

  it('refuses bad values at start-up naming the path, the value and the rule', () => {
    expect(
      problemsOf({
        defaults: { attemptCeiling: { multiple: 0.5 } },
        policies: {
          a: { attemptCeiling: { quantile: 1 } },
          b: { attemptCeiling: 3 },
          c: { attemptCeiling: { p: 0.9 } },
          d: { adaptive: 'no' },
          e: { backoff: { type: 'measured', quantile: 0.9, spread: 0.5 } },
          f: { adaptive: false, hedge: { quantile: 0.95 } },
          g: { adaptive: false, saturation: 5 },
        },
      }),
    ).toEqual([
      'defaults.attemptCeiling.multiple: 0.5 is invalid: must be a finite number >= 1',
      'policies.a.attemptCeiling.quantile: 1 is invalid: must be a number in (0, 1), e.g. 0.95',
      'policies.b.attemptCeiling: 3 is invalid: must be true, false or { multiple?, quantile? }',
      'policies.c.attemptCeiling.p: 0.9 is invalid: is not a known attempt ceiling option (multiple, quantile)',
      'policies.d.adaptive: "no" is invalid: must be true or false',
      'policies.e.backoff.quantile: 0.9 is invalid: must be a number in (0, 0.5]',
      'policies.e.backoff.spread: 0.5 is invalid: must be a finite number >= 1',
      'policies.f.hedge: {"quantile":0.95,"maximumConcurrent":2,"suppressAt":0.5,"winRate":undefined} is invalid: must be left out when adaptive is false (it acts on measured terms, which adaptive: false turns off)',
      'policies.g.saturation: 5 is invalid: must be left out when adaptive is false (it acts on measured terms, which adaptive: false turns off)',
    ]);
  });
});
