import { formatRetryAfter, parseRetryAfter } from './retry-after.js';

const six = Date.UTC(2026, 10, 30, 6, 0, 0);

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120000],
    ['0', 0],
    ['Mon, 30 Nov 2026 06:02:00 GMT', 120000],
    [' 7 ', 7000],
  ])('%p → %p ms at 06:00:00 GMT', (value, expected) => {
    expect(parseRetryAfter(value, six)).toBe(expected);
  });

  it.each([
    ['-3'],
    ['1.5'],
    ['abc'],
    [''],
    ['12abc'],
    ['Mon, 99 Foo 2026 06:02:00 GMT'],
    [null],
    [undefined],
  ])('%p gives no hint', (value) => {
    expect(parseRetryAfter(value, six)).toBeUndefined();
  });

  it.each([[5], [0], [true], [['1']], [{ value: '1' }], [Symbol('1')], [5n]])(
    '%p (not a string) gives no hint and never throws',
    (value) => {
      expect(parseRetryAfter(value, six)).toBeUndefined();
    },
  );

  it('gives no hint for a date equal to now or before it (the wait is over), nor with a wall time that is not a number', () => {
    expect(parseRetryAfter('Mon, 30 Nov 2026 06:00:00 GMT', six)).toBeUndefined();
    expect(parseRetryAfter('Mon, 30 Nov 2026 05:00:00 GMT', six)).toBeUndefined();
    expect(parseRetryAfter('Mon, 30 Nov 2026 06:00:01 GMT', six)).toBe(1000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 06:00:01 GMT', Number.NaN)).toBeUndefined();
    expect(parseRetryAfter('120', Number.NaN)).toBe(120_000);
  });
});

describe('formatRetryAfter', () => {
  it('rounds up to whole seconds, at least 1', () => {
    expect(formatRetryAfter(1200)).toBe('2');
    expect(formatRetryAfter(1000)).toBe('1');
    expect(formatRetryAfter(1)).toBe('1');
    expect(formatRetryAfter(0)).toBe('1');
    expect(formatRetryAfter(-5)).toBe('1');
    expect(formatRetryAfter(Number.NaN)).toBe('1');
  });

  it('caps at one day and writes digits only, whatever the wait', () => {
    expect(formatRetryAfter(86_400_000)).toBe('86400');
    expect(formatRetryAfter(86_400_001)).toBe('86400');
    expect(formatRetryAfter(Infinity)).toBe('86400');
    expect(formatRetryAfter(1e24)).toBe('86400');
    for (const ms of [0.5, 999.9, 12_345.6, 7e9])
      expect(formatRetryAfter(ms)).toMatch(/^[1-9]\d*$/);
  });
});
