import { OutcomeWindow } from './outcome-window.js';

describe('OutcomeWindow', () => {
  it('cuts a 30 s trip window into 1 s buckets and a 5 min baseline before it', () => {
    const w = new OutcomeWindow(30_000, 300_000, 0);
    expect(w.bucketWidth).toBe(1000);
    w.record(0, true, false);
    w.record(500, false, true);
    expect([w.tripCalls, w.tripFailures, w.tripSlow, w.baselineCalls]).toEqual([2, 1, 1, 0]);
    w.advance(29_999); // bucket 29: bucket 0 is still the trip window's oldest
    expect([w.tripCalls, w.baselineCalls]).toEqual([2, 0]);
    w.advance(30_000); // bucket 30: bucket 0 moves into the baseline; slow counts stay behind
    expect([w.tripCalls, w.tripFailures, w.tripSlow, w.baselineCalls, w.baselineFailures]).toEqual([
      0, 0, 0, 2, 1,
    ]);
    w.advance(329_999);
    expect(w.baselineCalls).toBe(2);
    w.advance(330_000); // 300 buckets later it leaves the baseline
    expect([w.baselineCalls, w.baselineFailures]).toEqual([0, 0]);
  });

  it('keeps running sums right across partial rotations and long gaps', () => {
    const w = new OutcomeWindow(30_000, 300_000, 0);
    for (let s = 0; s < 400; s++) w.record(s * 1000, s % 4 === 0, false);
    // At bucket 399: trip = buckets 370..399, baseline = 70..369.
    expect([w.tripCalls, w.tripFailures, w.baselineCalls, w.baselineFailures]).toEqual([
      30, 7, 300, 75,
    ]);
    w.advance(10_000_000);
    expect([w.tripCalls, w.tripFailures, w.baselineCalls, w.baselineFailures]).toEqual([
      0, 0, 0, 0,
    ]);
    w.record(10_000_000, true, true);
    expect([w.tripCalls, w.tripFailures, w.tripSlow]).toEqual([1, 1, 1]);
  });

  it('clearTripWindow forgets the trip window only', () => {
    const w = new OutcomeWindow(30_000, 300_000, 0);
    w.record(0, false, false);
    w.record(40_000, true, true);
    w.clearTripWindow(41_000);
    expect([w.tripCalls, w.tripFailures, w.tripSlow, w.baselineCalls]).toEqual([0, 0, 0, 1]);
    w.advance(80_000);
    expect(w.baselineCalls).toBe(1);
  });

  it('ignores a reading older than the current bucket (counts it now)', () => {
    const w = new OutcomeWindow(30_000, 300_000, 5000);
    w.record(4000, true, false);
    expect(w.tripFailures).toBe(1);
  });
});
