import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { PolicyConfigError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import {
  ATTEMPTS_RULE,
  BUCKET_RULES,
  MAXIMUM_FLOOR_PER_SECOND,
  MINIMUM_FLOOR_PER_SECOND,
} from './option-rules.js';
import { CLOCK_RULE } from '../time/clock-rule.js';

const PLAIN =
  'must be a plain object (an object literal or a JSON/YAML mapping; not an array, Map, Date, RegExp, class instance or an object inheriting properties)';

describe('option rules through policy.with() and the core factories', () => {
  it('refuses null where a value is expected, never reading it as the default', () => {
    expect(() => RetryBudget.of({ fraction: null as unknown as number })).toThrow(
      new PolicyConfigError('budget.fraction', null, 'must be a number in [0, 1]'),
    );
    expect(() => Backoff.exponential({ transientBase: null as unknown as number })).toThrow(
      'backoff.transientBase: null is invalid: must be a finite duration in ms >= 0',
    );
    expect(() => Breaker.with({ breakDuration: null as unknown as number })).toThrow(
      'breaker.breakDuration: null is invalid: must be a finite duration in ms > 0',
    );
    expect(() => Resilience.default.with({ attempts: null as unknown as number })).toThrow(
      `attempts: null is invalid: ${ATTEMPTS_RULE.rule}`,
    );
    expect(() => RetryBudget.slidingWindow({ retryRatio: null as unknown as number })).toThrow(
      'budget.retryRatio: null is invalid: must be a number in [0, 1] (retries per logical call)',
    );
  });

  it.each([
    ['a Map', new Map([['attempts', 5]]), 'Map(1)'],
    ['a Date', new Date(0), 'Date(1970-01-01T00:00:00.000Z)'],
    ['an array', [], '[]'],
    [
      'an object inheriting its options',
      Object.create({ attempts: 9 }),
      '[inheriting attempts] {}',
    ],
  ])(
    'refuses %s as the options of with(), never reading it as "all defaults"',
    (_what, options, shown) => {
      expect(() => Resilience.default.with(options as never)).toThrow(
        `options: ${shown} is invalid: ${PLAIN}`,
      );
    },
  );

  it('refuses non-plain objects as budget, breaker and backoff settings', () => {
    expect(() => RetryBudget.of(new Map() as never)).toThrow(`budget: Map(0) is invalid: ${PLAIN}`);
    expect(() => Breaker.with(/x/ as never)).toThrow(`breaker: RegExp(/x/) is invalid: ${PLAIN}`);
    expect(() => Backoff.exponential(Object.create({ factor: 5 }))).toThrow(
      `backoff: [inheriting factor] {} is invalid: ${PLAIN}`,
    );
  });

  it('accepts null-prototype objects with own properties', () => {
    const options = Object.assign(Object.create(null), { attempts: 2 });
    expect(Resilience.default.with(options).options.attempts).toBe(2);
  });

  it('bounds attempts the same way in with() and in run()', () => {
    expect(() => Resilience.default.with({ attempts: 101 })).toThrow(
      'attempts: 101 is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
    );
    expect(Resilience.default.with({ attempts: 100 }).options.attempts).toBe(100);
    expect(() => Resilience.default.run(() => 1, { attempts: 101 })).toThrow(
      new PolicyConfigError('attempts', 101, ATTEMPTS_RULE.rule),
    );
    expect(() => Resilience.default.run(() => 1, { attempts: 0 })).toThrow(
      new PolicyConfigError('attempts', 0, ATTEMPTS_RULE.rule),
    );
  });

  it('bounds the budget floor: 0, or one token a day up to a million a second', () => {
    const rule = BUCKET_RULES.minimumPerSecond.rule;
    expect(rule).toBe(
      'must be 0 (no floor) or a number of tokens per second in [0.00001157 (one a day), 1000000]',
    );
    expect(RetryBudget.of({ minimumPerSecond: 0 })).toBeInstanceOf(RetryBudget);
    expect(RetryBudget.of({ minimumPerSecond: MINIMUM_FLOOR_PER_SECOND })).toBeInstanceOf(
      RetryBudget,
    );
    expect(RetryBudget.of({ minimumPerSecond: MAXIMUM_FLOOR_PER_SECOND })).toBeInstanceOf(
      RetryBudget,
    );
    expect(() => RetryBudget.of({ minimumPerSecond: 1e-300 })).toThrow(
      `budget.minimumPerSecond: 1e-300 is invalid: ${rule}`,
    );
    expect(() => RetryBudget.of({ minimumPerSecond: 5e-324 })).toThrow(
      `budget.minimumPerSecond: 5e-324 is invalid: ${rule}`,
    );
    expect(() => RetryBudget.of({ minimumPerSecond: 1e7 })).toThrow(
      `budget.minimumPerSecond: 10000000 is invalid: ${rule}`,
    );
  });

  it('the floor bound keeps the retry-after hint within a day', () => {
    const clock = new FakeClock();
    const bucket = RetryBudget.of({
      fraction: 0,
      minimumPerSecond: MINIMUM_FLOOR_PER_SECOND,
    }).resolve({}, clock)!;
    while (bucket.tryAcquire());
    expect(bucket.retryAfter()).toBeLessThanOrEqual(86_400_000);
    expect(bucket.retryAfter()).toBeGreaterThan(86_000_000);
  });

  it('has one Clock test for the policy option, the module option and the testing kit', () => {
    expect(CLOCK_RULE.accepts(new FakeClock())).toBe(true);
    expect(CLOCK_RULE.accepts({ now: () => 0 })).toBe(false);
    expect(() => Resilience.default.with({ clock: { now: () => 0 } as never })).toThrow(
      `clock: {"now":[function]} is invalid: ${CLOCK_RULE.rule}`,
    );
  });

  it('refuses reserved names for a shared budget', () => {
    expect(() => RetryBudget.shared('__proto__')).toThrow(
      'budget.shared: "__proto__" is invalid: must be a non-empty string other than __proto__, constructor, prototype',
    );
  });
});
