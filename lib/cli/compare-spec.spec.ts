import { parseResilienceConfig } from '../config/policy-config.js';
import { applyChanges, parseCompareSpec } from './compare-spec.js';

/** The plan of policy `p` after applying `spec` to `own`. */
function planAfter(own: Record<string, unknown>, spec: string) {
  return parseResilienceConfig({
    policies: { p: applyChanges(own, parseCompareSpec(spec)) },
  }).policies.get('p')!;
}

describe('--compare specs: any policy field by its config path', () => {
  it('types values as config JSON: numbers, booleans, none as null for bounds, strings for durations', () => {
    expect(
      parseCompareSpec(
        'attempts=5,budget.fraction=0.2,breaker=on,budget=none,deadline=none,attemptTimeout=800ms,backoff.jitter=equal',
      ),
    ).toEqual([
      { path: ['attempts'], value: 5 },
      { path: ['budget', 'fraction'], value: 0.2 },
      { path: ['breaker'], value: true },
      { path: ['budget'], value: 'none' },
      { path: ['deadline'], value: null },
      { path: ['attemptTimeout'], value: '800ms' },
      { path: ['backoff', 'jitter'], value: 'equal' },
    ]);
    expect(parseCompareSpec('breaker=none')).toEqual([{ path: ['breaker'], value: false }]);
  });

  it('sets a nested breaker field over breaker: true, and a duration the config parses', () => {
    const plan = planAfter(
      { attempts: 3, breaker: true },
      'breaker.consecutiveFailures=10,attemptTimeout=800ms',
    );
    expect([
      plan.breaker?.consecutiveFailures,
      plan.changes.attemptTimeout,
      plan.changes.attempts,
    ]).toEqual([10, 800, 3]);
  });

  it('leaves the original config untouched', () => {
    const own = { breaker: { consecutiveFailures: 5 } };
    applyChanges(own, parseCompareSpec('breaker.consecutiveFailures=9'));
    expect(own).toEqual({ breaker: { consecutiveFailures: 5 } });
  });

  it('leaves unknown fields and bad values to the config parser, which names the path and the rule', () => {
    expect(() => planAfter({}, 'breaker.consecutiveFailure=10')).toThrow(
      'policies.p.breaker.consecutiveFailure',
    );
    expect(() => planAfter({}, 'attempts=0')).toThrow(
      'policies.p.attempts: 0 is invalid: must be an integer >= 1',
    );
  });

  it('rejects a pair without a field name, naming --compare', () => {
    expect(() => parseCompareSpec('attempts')).toThrow(
      '--compare: "attempts" is invalid: must be field=value pairs',
    );
    expect(() => parseCompareSpec('breaker..x=1')).toThrow('--compare: "breaker..x=1" is invalid');
  });
});
