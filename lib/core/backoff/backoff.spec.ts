import { Backoff, type BackoffInput } from './backoff.js';
import { PolicyConfigError } from '../errors.js';
import { Jitter } from './jitter.js';
import { Verdict } from '../classification/verdict.js';

const input = (
  attempt: number,
  random: () => number,
  verdict = Verdict.transient,
): BackoffInput => ({
  attempt,
  verdict,
  error: new Error('x'),
  remaining: Infinity,
  signal: undefined,
  random,
});
const top = () => 0.999999999;

describe('Backoff.exponential', () => {
  it('doubles the transient base per retry up to the cap, before jitter', () => {
    const curve = Backoff.exponential({ jitter: Jitter.none });
    const delays = [2, 3, 4, 5, 6, 10, 11, 12].map((attempt) => curve.compute(input(attempt, top)));
    expect(delays).toEqual([100, 200, 400, 800, 1600, 25600, 30000, 30000]);
  });

  it('uses the throttled base after a Throttled verdict', () => {
    const curve = Backoff.exponential({ jitter: 'none' });
    expect(curve.compute(input(2, top, Verdict.throttled()))).toBe(1000);
    expect(curve.compute(input(3, top, Verdict.throttled()))).toBe(2000);
  });

  it('full jitter spans [0, d]; equal jitter [d/2, d]', () => {
    const full = Backoff.exponential({ jitter: 'full' });
    const equal = Backoff.exponential({ jitter: 'equal' });
    expect(full.compute(input(3, () => 0))).toBe(0);
    expect(full.compute(input(3, () => 0.5))).toBe(100);
    expect(equal.compute(input(3, () => 0))).toBe(100);
    expect(equal.compute(input(3, () => 0.5))).toBe(150);
  });

  it('keeps every delay finite and within [0, max] for any attempt number', () => {
    const curve = Backoff.exponential({ jitter: 'none', factor: 10 });
    for (const attempt of [2, 50, 309, 310, 2000, 1e9, Number.MAX_SAFE_INTEGER]) {
      const delay = curve.compute(input(attempt, top));
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(30000);
    }
    expect(curve.compute(input(2000, top))).toBe(30000);
  });

  it('rejects bad options naming the field, the value and the rule', () => {
    expect(() => Backoff.exponential({ transientBase: -5 })).toThrow(
      'backoff.transientBase: -5 is invalid: must be a finite duration in ms >= 0',
    );
    expect(() => Backoff.exponential({ factor: 0.5 })).toThrow(PolicyConfigError);
    expect(() => Backoff.exponential({ jitter: 'wild' as never })).toThrow(
      `backoff.jitter: "wild" is invalid`,
    );
    expect(() => Backoff.exponential({ base: 3 } as never)).toThrow(
      'backoff.base: 3 is invalid: is not a known option',
    );
  });
});

describe('other curves', () => {
  it('constant, none and custom', () => {
    expect(Backoff.constant(250).compute(input(2, top))).toBe(250);
    expect(Backoff.none.compute(input(5, top))).toBe(0);
    const custom = Backoff.custom((next) => next.attempt * 1000, 2500);
    expect(custom.compute(input(2, top))).toBe(2000);
    expect(custom.compute(input(9, top))).toBe(2500);
    expect(Backoff.custom(() => Number.NaN).compute(input(2, top))).toBe(0);
    expect(Backoff.custom(() => -4).compute(input(2, top))).toBe(0);
  });

  it('a custom curve can start from a built-in one through compute', () => {
    const base = Backoff.exponential({ jitter: 'none' });
    const doubled = Backoff.custom((next) => base.compute(next) * 2);
    expect(doubled.compute(input(3, top))).toBe(400);
  });

  it('rejects a negative constant', () => {
    expect(() => Backoff.constant(-1)).toThrow('backoff.delay: -1 is invalid');
  });
});
