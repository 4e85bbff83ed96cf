import { nominalBreak, servedBreak } from './break-duration.js';

describe('nominalBreak', () => {
  it('doubles from 15 s per consecutive open up to 2 min', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => nominalBreak(n, 15_000, 120_000))).toEqual([
      15_000, 30_000, 60_000, 120_000, 120_000, 120_000,
    ]);
  });

  it('stays finite and capped for any number of opens', () => {
    expect(nominalBreak(10_000, 15_000, 120_000)).toBe(120_000);
    expect(nominalBreak(2000, 1, Number.MAX_VALUE)).toBe(2 ** 52);
    expect(nominalBreak(0, 15_000, 120_000)).toBe(15_000);
  });
});

describe('servedBreak', () => {
  it('equal: half fixed, half random', () => {
    expect(servedBreak(15_000, 'equal', () => 0)).toBe(7500);
    expect(servedBreak(15_000, 'equal', () => 0.999)).toBeCloseTo(14_992.5, 6);
  });

  it('full: anywhere below the break; none: exactly the break', () => {
    expect(servedBreak(15_000, 'full', () => 0)).toBe(0);
    expect(servedBreak(15_000, 'full', () => 0.5)).toBe(7500);
    expect(servedBreak(15_000, 'none', () => 0)).toBe(15_000);
  });

  it('clamps a misbehaving random source into [0, 1]', () => {
    expect(servedBreak(15_000, 'equal', () => -3)).toBe(7500);
    expect(servedBreak(15_000, 'equal', () => 7)).toBe(15_000);
    expect(servedBreak(15_000, 'full', () => Number.NaN)).toBe(0);
  });
});
