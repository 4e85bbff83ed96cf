import { CircuitBreaker } from './circuit-breaker.js';
import { Breaker } from './breaker-value.js';
import { FakeClock } from '../time/fake-clock.js';
import { PolicyConfigError } from '../errors.js';

const random = () => 0.5;

describe('Breaker', () => {
  it('default resolves one breaker per owner', () => {
    const clock = new FakeClock();
    const a = {};
    const b = {};
    const first = Breaker.default.resolve(a, clock, random);
    expect(Breaker.default.resolve(a, clock, random)).toBe(first);
    expect(Breaker.default.resolve(b, clock, random)).not.toBe(first);
    expect(first.settings.breakDuration).toBe(1000);
  });

  it('with() lays settings over the defaults, or over another value', () => {
    const fast = Breaker.with({ breakDuration: 500, recovery: true });
    expect(fast.settings.breakDuration).toBe(500);
    expect(fast.settings.recovery).toEqual({
      initialFraction: 0.05,
      rampFraction: 0.25,
      step: 0.05,
    });
    const derived = fast.with({ closeAfter: 3 });
    expect([
      derived.settings.breakDuration,
      derived.settings.closeAfter,
      derived.settings.recovery?.step,
    ]).toEqual([500, 3, 0.05]);
    expect(Breaker.default.settings.breakDuration).toBe(1000);
  });

  it('with() rejects unknown keys and bad values with the field named', () => {
    expect(() => Breaker.with({ breakDuraton: 1 } as never)).toThrow(PolicyConfigError);
    expect(() => Breaker.with({ jitter: 'some' as never })).toThrow(
      `breaker.jitter: "some" is invalid`,
    );
  });

  it('using() pins an existing breaker for every owner', () => {
    const clock = new FakeClock();
    const pinned = new CircuitBreaker({ closeAfter: 3 }, { clock, random });
    const value = Breaker.using(pinned);
    expect(value.resolve({}, new FakeClock(), random)).toBe(pinned);
    expect(value.resolve({}, new FakeClock(), random)).toBe(pinned);
    expect(value.settings.closeAfter).toBe(3);
  });

  it('passes the transition listener to the breaker it creates', () => {
    const seen: string[] = [];
    const breaker = Breaker.default.resolve({}, new FakeClock(), random, (from, to) =>
      seen.push(`${from}->${to}`),
    );
    breaker.isolate()();
    expect(seen).toEqual(['closed->isolated', 'isolated->halfOpen']);
  });

  it('from() reads the policy config forms', () => {
    expect(Breaker.from(true)).toBe(Breaker.default);
    expect(Breaker.from(false)).toBeUndefined();
    expect(Breaker.from(undefined)).toBeUndefined();
    const custom = Breaker.with({ closeAfter: 4 });
    expect(Breaker.from(custom)).toBe(custom);
    expect(Breaker.from({ halfOpenProbes: 2 })!.settings.halfOpenProbes).toBe(2);
    expect(() => Breaker.from('on', 'policies.payments.breaker')).toThrow(
      'policies.payments.breaker: "on" is invalid: must be true, false, a Breaker or an object of breaker settings',
    );
    expect(() => Breaker.from({ closeAfter: 0 }, 'policies.payments.breaker')).toThrow(
      'policies.payments.breaker.closeAfter: 0 is invalid',
    );
  });
});
