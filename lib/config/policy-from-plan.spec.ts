import { parseResilienceConfig } from './policy-config.js';
import { policyFromPlan } from './policy-from-plan.js';

const plan = (policies: Record<string, unknown>, name: string) =>
  parseResilienceConfig({ policies }).policies.get(name)!;

describe('policyFromPlan', () => {
  it('maps the breaker section: settings, the http preset default, and false', () => {
    const withSettings = policyFromPlan(plan({ p: { breaker: { breakDuration: '20s' } } }, 'p'));
    expect(withSettings.options.breaker!.settings.breakDuration).toBe(20_000);
    expect(
      policyFromPlan(plan({ p: { preset: 'http' } }, 'p')).options.breaker!.settings.breakDuration,
    ).toBe(1000);
    expect(
      policyFromPlan(plan({ p: { preset: 'http', breaker: false } }, 'p')).options.breaker,
    ).toBeUndefined();
    expect(policyFromPlan(plan({ p: {} }, 'p')).options.breaker).toBeUndefined();
  });

  it('maps the budget: none, or a private bucket per instance with the given parameters', () => {
    expect(policyFromPlan(plan({ p: { budget: false } }, 'p')).bucket()).toBeUndefined();
    expect(
      policyFromPlan(plan({ p: { budget: { minimumPerSecond: 2 } } }, 'p')).bucket()!.capacity,
    ).toBe(20);
  });
});
