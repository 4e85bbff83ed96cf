import { FakeClock } from '../../core/index.js';
import { CubicRateLimiter } from './aws-rate-limiter.js';

/** Records `n` answers at the clock's current time. */
const answers = (limiter: CubicRateLimiter, n: number, throttled = false) => {
  for (let i = 0; i < n; i++) limiter.update(throttled);
};

describe("CubicRateLimiter (the AWS SDKs' adaptive mode, reference model)", () => {
  it('sends at once and keeps the minimum rate until the first throttling answer', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(100);
    answers(limiter, 10);
    // Success before any throttle: 0.4 · (0.1 − 0 − 0)³ + 0 = 0.0004, capped at 2 × 0 measured → the 0.5/s floor.
    expect([
      limiter.enabled,
      limiter.fillRate,
      limiter.maxCapacity,
      limiter.measuredTxRate,
    ]).toEqual([false, 0.5, 1, 0]);
    expect(limiter.acquire()).toBeUndefined();
  });

  it('cuts the rate to 0.7 × the measured send rate on a throttling answer', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(100);
    answers(limiter, 10);
    await clock.advance(400);
    limiter.update(true);
    // The half-second bucket [0, 0.5) closed with 11 answers: 11 / 0.5 s = 22/s, smoothed 0.8 · 22 + 0.2 · 0 = 17.6.
    expect(limiter.measuredTxRate).toBe(17.6);
    expect(limiter.lastMaxRate).toBe(17.6);
    // 17.6 · 0.7 = 12.32 (below 2 × 17.6), which is also the capacity.
    expect([limiter.enabled, limiter.fillRate, limiter.maxCapacity]).toEqual([true, 12.32, 12.32]);
    // The bucket filled 0.4 s × 0.5/s = 0.2 tokens since its first refill at 100 ms.
    expect(limiter.availableTokens).toBeCloseTo(0.2, 12);
  });

  it('holds a send until the bucket refilled a whole token, at the new rate', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(100);
    answers(limiter, 10);
    await clock.advance(400);
    limiter.update(true);
    let sent = false;
    void limiter.acquire()!.then(() => (sent = true));
    // The missing 0.8 token at 12.32/s takes 0.8 / 12.32 s = 64.935 ms.
    await clock.advance(64);
    expect(sent).toBe(false);
    await clock.advance(1);
    expect(sent).toBe(true);
    expect(limiter.availableTokens).toBeCloseTo(0, 2); // the token it waited for is taken
  });

  it('recovers along C · (t − lastThrottle − W)³ + lastMaxRate, capped at twice the measured rate', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(100);
    answers(limiter, 10);
    await clock.advance(400);
    limiter.update(true);
    await clock.advance(400);
    limiter.update(false);
    // W = ∛(17.6 · 0.3 / 0.4) = ∛13.2 = 2.3633315 s; at 0.4 s after the throttle:
    // 0.4 · (0.4 − 2.3633315)³ + 17.6 = 14.5728015 (below the cap 2 × 17.6).
    expect(limiter.fillRate).toBe(14.57280153);
    await clock.advance(2100);
    limiter.update(false);
    // At 3.0 s the bucket [0.5, 3.0) closed with 2 answers: 2 / 2.5 s = 0.8/s, smoothed 0.8 · 0.8 + 0.2 · 17.6 = 4.16;
    // the curve gives 0.4 · (2.5 − 2.3633315)³ + 17.6 = 17.601, capped at 2 × 4.16 = 8.32.
    expect([limiter.measuredTxRate, limiter.fillRate, limiter.maxCapacity]).toEqual([
      4.16, 8.32, 8.32,
    ]);
  });

  it('cuts from the lower of the measured and the current rate once on, and never below 0.5/s', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(100);
    answers(limiter, 10);
    await clock.advance(400);
    limiter.update(true); // 12.32/s, measured 17.6
    limiter.update(true); // min(17.6, 12.32) · 0.7 = 8.624
    expect([limiter.lastMaxRate, limiter.fillRate]).toEqual([12.32, 8.624]);
    for (let i = 0; i < 20; i++) limiter.update(true); // 8.624 · 0.7^20 ≈ 0.0069 → the floor
    expect(limiter.fillRate).toBe(0.5);
    expect(limiter.maxCapacity).toBe(1);
  });

  it('gives up the wait, taking nothing, when the attempt aborts', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(500);
    limiter.update(true); // the bucket [0, 0.5) closed with this one answer: 1 / 0.5 s · 0.8 = 1.6/s measured → 1.12/s
    expect(limiter.fillRate).toBe(1.12);
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal)!;
    controller.abort(new Error('attempt timed out'));
    await expect(waiting).rejects.toThrow('attempt timed out');
    expect(clock.pending).toBe(0);
  });
});

describe('CubicRateLimiter waiters', () => {
  it('serves waiting sends in arrival order, one token per 1 / fillRate s', async () => {
    const clock = new FakeClock();
    const limiter = new CubicRateLimiter(clock);
    await clock.advance(500);
    limiter.update(true); // 1.12/s (see above), bucket empty
    const order: number[] = [];
    for (const n of [1, 2, 3]) void limiter.acquire()!.then(() => order.push(n));
    // 1 / 1.12 s = 892.857 ms per token.
    await clock.advance(892);
    expect(order).toEqual([]);
    await clock.advance(1);
    expect(order).toEqual([1]);
    await clock.advance(893);
    expect(order).toEqual([1, 2]);
    await clock.advance(893);
    expect(order).toEqual([1, 2, 3]);
    expect(clock.pending).toBe(0);
  });
});
