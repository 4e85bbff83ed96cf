import { WallClock } from './clock.js';

describe('WallClock', () => {
  it('converts between relative ms and epoch deadlines', () => {
    const at = WallClock.after(5000);
    const left = WallClock.until(at);
    expect(left).toBeGreaterThan(4900);
    expect(left).toBeLessThanOrEqual(5000);
    expect(WallClock.until(new Date(at))).toBeLessThanOrEqual(5000);
  });

  it('keeps Infinity for no deadline, and reads garbage as none', () => {
    expect(WallClock.after(Infinity)).toBe(Infinity);
    expect(WallClock.until(Infinity)).toBe(Infinity);
    expect(WallClock.until(undefined)).toBe(Infinity);
    expect(WallClock.until(Number.NaN)).toBe(Infinity);
    expect(WallClock.until(new Date('garbage'))).toBe(Infinity);
  });

  it('is negative once the deadline has passed', () => {
    expect(WallClock.until(WallClock.after(-10))).toBeLessThan(0);
  });
});
