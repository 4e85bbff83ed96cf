import { FakeClock } from '../time/fake-clock.js';
import { PolicyConfigError } from '../errors.js';
import { MINIMUM_CAPACITY, RetryBudget, TokenBucket } from './retry-budget.js';

describe('TokenBucket', () => {
  it('starts full at 10 s of floor and spends one token per retry', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({}, clock);
    expect(bucket.capacity).toBe(30);
    expect(bucket.level).toBe(30);
    for (let i = 0; i < 30; i++) expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
    expect(bucket.level).toBe(0);
    expect(bucket.utilization).toBe(1);
  });

  it('refills at the floor and deposits the fraction per success, capped at capacity', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ fraction: 0.1, minimumPerSecond: 3 }, clock);
    while (bucket.tryAcquire());
    await clock.advance(500);
    expect(bucket.level).toBeCloseTo(1.5, 10);
    for (let i = 0; i < 5; i++) bucket.deposit();
    expect(bucket.level).toBeCloseTo(2.0, 10);
    await clock.advance(60_000);
    expect(bucket.level).toBe(30);
    bucket.deposit();
    expect(bucket.level).toBe(30);
  });

  it('computes retryAfter from a freshly refilled bucket', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ minimumPerSecond: 4 }, clock);
    while (bucket.tryAcquire());
    expect(bucket.retryAfter()).toBe(250);
    await clock.advance(100);
    expect(bucket.retryAfter()).toBeCloseTo(150, 10);
    await clock.advance(150);
    expect(bucket.retryAfter()).toBe(0);
  });

  it('with a zero floor: minimum capacity, only deposits refill, no retryAfter hint', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ fraction: 0.5, minimumPerSecond: 0 }, clock);
    expect(bucket.capacity).toBe(MINIMUM_CAPACITY);
    while (bucket.tryAcquire());
    await clock.advance(3_600_000);
    expect(bucket.level).toBe(0);
    expect(bucket.retryAfter()).toBeUndefined();
    bucket.deposit();
    bucket.deposit();
    expect(bucket.tryAcquire()).toBe(true);
  });

  it('accrues nothing when time does not move forward', () => {
    let now = 1000;
    const clock = { now: () => now, setTimer: () => ({ due: 0 }), clearTimer: () => undefined };
    const bucket = new TokenBucket({}, clock);
    while (bucket.tryAcquire());
    now = 500;
    expect(bucket.level).toBe(0);
    now = 1000;
    expect(bucket.level).toBe(0);
  });

  it('reconfigure keeps the level, clamped to the new capacity', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({}, clock);
    for (let i = 0; i < 5; i++) bucket.tryAcquire();
    bucket.reconfigure({ minimumPerSecond: 5 });
    expect(bucket.capacity).toBe(50);
    expect(bucket.level).toBe(25);
    bucket.reconfigure({ minimumPerSecond: 1 });
    expect(bucket.level).toBe(10);
  });
});

describe('RetryBudget', () => {
  it('automatic gives each owner its own bucket', () => {
    const clock = new FakeClock();
    const a = {};
    const b = {};
    expect(RetryBudget.automatic.resolve(a, clock)).toBe(RetryBudget.automatic.resolve(a, clock));
    expect(RetryBudget.automatic.resolve(a, clock)).not.toBe(
      RetryBudget.automatic.resolve(b, clock),
    );
  });

  it('of() is one bucket per value; shared() one per name, first options win; none is undefined', () => {
    const clock = new FakeClock();
    const budget = RetryBudget.of({ minimumPerSecond: 1 });
    expect(budget.resolve({}, clock)).toBe(budget.resolve({}, clock));
    const first = RetryBudget.shared('spec-db', { minimumPerSecond: 2 }).resolve({}, clock)!;
    const second = RetryBudget.shared('spec-db', { minimumPerSecond: 9 }).resolve({}, clock)!;
    expect(second).toBe(first);
    expect(second.capacity).toBe(20);
    expect(RetryBudget.none.resolve({}, clock)).toBeUndefined();
  });

  it('rejects invalid parameters naming field, value and rule', () => {
    expect(() => RetryBudget.of({ fraction: 1.5 })).toThrow(
      'budget.fraction: 1.5 is invalid: must be a number in [0, 1]',
    );
    expect(() => RetryBudget.of({ minimumPerSecond: -1 })).toThrow(
      'budget.minimumPerSecond: -1 is invalid',
    );
    expect(() => RetryBudget.of({ ratio: 1 } as never)).toThrow(PolicyConfigError);
    expect(() => RetryBudget.shared('')).toThrow('budget.shared: "" is invalid');
  });
});

describe('TokenBucket arithmetic', () => {
  it('ten deposits of 0.1 fund exactly one retry despite the floating-point sum', () => {
    const bucket = new TokenBucket({ minimumPerSecond: 0 }, new FakeClock());
    while (bucket.tryAcquire());
    for (let i = 0; i < 10; i++) bucket.deposit();
    expect(bucket.retryAfter()).toBe(0);
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.level).toBe(0);
    expect(bucket.tryAcquire()).toBe(false);
  });

  it('shared(): the first declaration of a name wins, whichever policy uses it first', () => {
    const first = RetryBudget.shared('spec-first-declared', { minimumPerSecond: 1 });
    const later = RetryBudget.shared('spec-first-declared', { minimumPerSecond: 5 });
    expect(later.resolve({}, new FakeClock())!.capacity).toBe(10);
    expect(first.resolve({}, new FakeClock())).toBe(later.resolve({}, new FakeClock()));
  });
});
