import { RecentOutcomes } from './recent-outcomes.js';

describe('RecentOutcomes', () => {
  it('keeps the last `capacity` outcomes with a running failure count', () => {
    const recent = new RecentOutcomes(3, 30_000);
    recent.record(0, true);
    recent.record(1, false);
    recent.record(2, true);
    expect([recent.count, recent.failures]).toEqual([3, 2]);
    recent.record(3, false); // the oldest (a failure) leaves
    expect([recent.count, recent.failures]).toEqual([3, 1]);
  });

  it('drops outcomes older than maxAge, and clears', () => {
    const recent = new RecentOutcomes(100, 1000);
    recent.record(0, true);
    recent.record(500, true);
    recent.advance(1000); // 0 is now exactly maxAge old: still counted
    expect(recent.count).toBe(2);
    recent.advance(1001);
    expect([recent.count, recent.failures]).toEqual([1, 1]);
    recent.clear();
    expect([recent.count, recent.failures]).toEqual([0, 0]);
  });
});
