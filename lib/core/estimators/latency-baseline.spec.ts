import { LatencyBaseline } from './latency-baseline.js';

describe('LatencyBaseline', () => {
  it('counts a 10 s slot once it is older than the trip window, for 5 minutes', () => {
    const b = new LatencyBaseline(30_000, 300_000, 20);
    for (let i = 0; i < 20; i++) b.add(9_999, 100);
    expect(b.slotWidth).toBe(10_000);
    expect(b.count(39_999)).toBe(0);
    expect(b.isWarm(40_000)).toBe(true);
    expect(b.median(40_000)).toBe(100);
    expect(b.count(339_999)).toBe(20);
    expect(b.count(340_000)).toBe(0);
    expect(b.median(340_000)).toBeUndefined();
  });

  it('takes the middle value, or the mean of the middle two', () => {
    const b = new LatencyBaseline(30_000, 300_000, 1);
    [5, 1, 9].forEach((d) => b.add(0, d));
    expect(b.median(40_000)).toBe(5);
    const even = new LatencyBaseline(30_000, 300_000, 1);
    [4, 1, 10, 8].forEach((d) => even.add(0, d));
    expect(even.median(40_000)).toBe(6);
  });

  it('keeps the latest 16 durations per slot but counts every success for warmth', () => {
    const b = new LatencyBaseline(30_000, 300_000, 20);
    for (let i = 0; i < 4; i++) b.add(0, 1000); // overwritten by the 16 that follow
    for (let i = 0; i < 16; i++) b.add(0, 50);
    expect(b.count(40_000)).toBe(20);
    expect(b.median(40_000)).toBe(50);
  });

  it('spreads samples over time: a busy slot cannot outvote quiet ones', () => {
    const b = new LatencyBaseline(30_000, 300_000, 1);
    for (let s = 0; s < 3; s++) for (let i = 0; i < 16; i++) b.add(s * 10_000, 100);
    for (let i = 0; i < 1000; i++) b.add(30_000, 900);
    // Slots 0..2 hold 48 × 100, slot 3 keeps 16 × 900: the median stays 100.
    expect(b.median(70_000)).toBe(100);
  });

  it('does not recompute between slot changes and ignores NaN durations', () => {
    const b = new LatencyBaseline(30_000, 300_000, 1);
    b.add(0, 100);
    expect(b.median(40_000)).toBe(100);
    b.add(40_000, Number.NaN);
    b.add(40_000, -5);
    expect(b.median(49_999)).toBe(100);
    expect(b.median(80_000)).toBe(50);
  });
});
