import { Ambient, type Criticality } from '../ambient/ambient-context.js';
import { Backoff } from '../backoff/backoff.js';
import { FakeClock } from '../time/fake-clock.js';
import { type CallRejectedError, PolicyConfigError } from '../errors.js';
import { type Policy, Resilience } from '../policy/policy.js';
import { RetryBudget } from './retry-budget.js';
import { SlidingWindowBudget, validateSlidingWindowOptions } from './sliding-window-budget.js';

/** `calls` logical calls now, then as many retries as the window allows (at most `limit`). */
function fill(budget: SlidingWindowBudget, calls: number, limit = 10_000): number {
  for (let i = 0; i < calls; i++) budget.recordCall();
  let retries = 0;
  while (retries < limit && budget.tryAcquire()) retries++;
  return retries;
}

describe('SlidingWindowBudget', () => {
  it('defaults: ratio 0.1, 30 s window, floor 100 calls', () => {
    expect(validateSlidingWindowOptions({})).toEqual({
      retryRatio: 0.1,
      samplingDuration: 30_000,
      minimumThroughput: 100,
    });
  });

  it('allows every retry below the throughput floor', () => {
    const budget = new SlidingWindowBudget({}, new FakeClock());
    expect(fill(budget, 99, 500)).toBe(500);
    expect(budget.utilization).toBe(0);
    expect(budget.canFundRetry).toBe(true);
  });

  it('at the floor, retries ≤ ratio × logical calls in the window (counting retries already made)', () => {
    const budget = new SlidingWindowBudget({}, new FakeClock());
    expect(fill(budget, 100)).toBe(10);
    expect(budget.window).toEqual({ calls: 100, retries: 10 });
    expect(budget.canFundRetry).toBe(false);
    expect(budget.utilization).toBe(1);
    // Ten more calls fund exactly one more retry.
    expect(fill(budget, 10)).toBe(1);
    expect(budget.window).toEqual({ calls: 110, retries: 11 });
  });

  it('counts calls, not attempts: retries never raise their own allowance', () => {
    const budget = new SlidingWindowBudget(
      { retryRatio: 0.5, minimumThroughput: 10 },
      new FakeClock(),
    );
    for (let i = 0; i < 10; i++) budget.recordCall();
    let granted = 0;
    for (let i = 0; i < 100; i++) if (budget.tryAcquire()) granted++;
    expect(granted).toBe(5);
    expect(budget.window).toEqual({ calls: 10, retries: 5 });
  });

  it('old slices leave the window: after 30 s the floor applies again', async () => {
    const clock = new FakeClock();
    const budget = new SlidingWindowBudget({}, clock);
    expect(fill(budget, 200)).toBe(20);
    await clock.advance(29_999);
    expect(budget.window).toEqual({ calls: 200, retries: 20 });
    expect(budget.tryAcquire()).toBe(false);
    await clock.advance(1);
    expect(budget.window).toEqual({ calls: 0, retries: 0 });
    expect(budget.tryAcquire()).toBe(true);
  });

  it('slides slice by slice (3 s each at the default window)', async () => {
    const clock = new FakeClock();
    const budget = new SlidingWindowBudget({ minimumThroughput: 1 }, clock);
    fill(budget, 100, 0); // t = 0: 100 calls
    await clock.advance(15_000);
    expect(fill(budget, 100)).toBe(20); // t = 15 s: 200 calls, 20 retries
    await clock.advance(15_000); // t = 30 s: the first 100 calls left, the retries are 15 s old
    expect(budget.window).toEqual({ calls: 100, retries: 20 });
    expect(budget.tryAcquire()).toBe(false);
    expect(budget.utilization).toBe(1);
  });

  it('retryAfter: the time until enough old slices leave, 0 when a retry is allowed', async () => {
    const clock = new FakeClock(1_000);
    const budget = new SlidingWindowBudget({ minimumThroughput: 1 }, clock);
    fill(budget, 100, 0); // slice [0, 3 s)
    await clock.advance(5_000); // t = 6 s, slice [6, 9 s)
    expect(fill(budget, 50)).toBe(15);
    // Allowed again when the t = 0 slice leaves at 30 s? No: 50 calls allow 5 < 15 retries. Only
    // when the 6 s slice leaves (at 36 s) does the window empty.
    expect(budget.retryAfter()).toBe(30_000);
    fill(budget, 200, 0);
    expect(budget.retryAfter()).toBe(0);
  });

  it('retryAfter when the newest slice alone still holds too many retries: the whole window', async () => {
    const clock = new FakeClock();
    const budget = new SlidingWindowBudget({ retryRatio: 0, minimumThroughput: 1 }, clock);
    budget.recordCall();
    expect(budget.tryAcquire()).toBe(false);
    expect(budget.retryAfter()).toBe(30_000);
    await clock.advance(1_000);
    expect(budget.retryAfter()).toBe(29_000);
  });

  it('sheddable retries stop once half the allowance is spent', () => {
    const budget = new SlidingWindowBudget({}, new FakeClock());
    for (let i = 0; i < 100; i++) budget.recordCall();
    let sheddable = 0;
    while (budget.tryAcquire(true)) sheddable++;
    expect(sheddable).toBe(5);
    let critical = 0;
    while (budget.tryAcquire()) critical++;
    expect(critical).toBe(5);
  });

  it('refund takes back the newest retry', () => {
    const budget = new SlidingWindowBudget({}, new FakeClock());
    expect(fill(budget, 100)).toBe(10);
    budget.refund();
    expect(budget.window).toEqual({ calls: 100, retries: 9 });
    expect(budget.tryAcquire()).toBe(true);
  });

  it('reconfigure keeps the counts and applies the new ratio at once', async () => {
    const clock = new FakeClock();
    const budget = new SlidingWindowBudget({}, clock);
    expect(fill(budget, 100)).toBe(10);
    budget.reconfigure({ retryRatio: 0.2, samplingDuration: 60_000 });
    expect(budget.window).toEqual({ calls: 100, retries: 10 });
    expect(fill(budget, 0)).toBe(10);
    await clock.advance(59_999);
    expect(budget.window.calls).toBe(100);
    await clock.advance(6_000);
    expect(budget.window).toEqual({ calls: 0, retries: 0 });
    expect(() => budget.reconfigure({ retryRatio: 2 })).toThrow(PolicyConfigError);
  });

  it('names the field, the value and the rule for bad options', () => {
    const clock = new FakeClock();
    expect(() => new SlidingWindowBudget({ retryRatio: 1.5 }, clock)).toThrow(
      'budget.retryRatio: 1.5 is invalid: must be a number in [0, 1] (retries per logical call)',
    );
    expect(() => new SlidingWindowBudget({ samplingDuration: 500 }, clock)).toThrow(
      'budget.samplingDuration: 500 is invalid: must be a duration in ms from 1000 (1 s) to 86400000 (1 day)',
    );
    expect(() => new SlidingWindowBudget({ minimumThroughput: 0.5 }, clock)).toThrow(
      'budget.minimumThroughput: 0.5 is invalid: must be an integer >= 1 (logical calls in the window)',
    );
    expect(() => new SlidingWindowBudget({ ratio: 0.1 } as never, clock)).toThrow(
      /budget\.ratio: .* is not a known sliding-window budget option/,
    );
  });
});

describe('RetryBudget.slidingWindow through the executor', () => {
  const down = () => Promise.reject(new Error('down'));

  it('counts each logical call once, whatever its attempts, and refuses the retry beyond ratio × calls', async () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({
      clock,
      attempts: 3,
      backoff: Backoff.none,
      budget: RetryBudget.slidingWindow({ minimumThroughput: 10, retryRatio: 0.2 }),
    });
    for (let i = 0; i < 9; i++) await policy.run(() => 'ok');
    const window = policy.bucket() as SlidingWindowBudget;
    expect(window.window).toEqual({ calls: 9, retries: 0 });
    // Call 10 reaches the floor: 0.2 × 10 = 2 retries, both used by this call's attempts 2 and 3.
    const first = await policy.tryRun(down);
    expect([first.reason, first.attempts.length]).toEqual(['attemptsExhausted', 3]);
    expect(window.window).toEqual({ calls: 10, retries: 2 });
    // Call 11: 0.2 × 11 = 2.2 allows no third retry; the refusal comes after the guarded pause.
    const second = policy.tryRun(down);
    await clock.advance(100);
    const refused = await second;
    expect([refused.reason, refused.attempts.length]).toEqual(['budgetExhausted', 1]);
    // The hint is read after the pause: the window empties 30 s after the calls, 100 ms have passed.
    expect((refused.error as CallRejectedError).retryAfter).toBe(29_900);
    expect(window.window).toEqual({ calls: 11, retries: 2 });
  });

  it('useAmbientCriticality: sheddable work stops retrying at half the bucket, critical work spends it all', async () => {
    const clock = new FakeClock();
    const make = () =>
      Resilience.default.with({
        clock,
        attempts: 2,
        backoff: Backoff.none,
        useAmbientCriticality: true,
        budget: RetryBudget.of({ minimumPerSecond: 0 }),
      });
    const retriesOf = async (policy: Policy, level: Criticality): Promise<number> => {
      let retries = 0;
      for (let i = 0; i < 12; i++) {
        const call = Ambient.run({ criticality: level }, () => policy.tryRun(down));
        await clock.advance(100);
        if ((await call).attempts.length === 2) retries++;
      }
      return retries;
    };
    expect(await retriesOf(make(), 'sheddable')).toBe(5); // capacity 10: spends while 5 would remain
    expect(await retriesOf(make(), 'critical')).toBe(10);
    const ignoring = make().with({ useAmbientCriticality: false });
    expect(await retriesOf(ignoring, 'sheddable')).toBe(10);
  });
});
