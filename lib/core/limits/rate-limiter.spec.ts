import { describe, expect, it } from '@jest/globals';
import { RetryBudget } from '../budget/retry-budget.js';
import { CallRejectedError, PolicyConfigError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import { Limit } from './limit-value.js';
import { limitedPolicy } from '../../../test/support/limited-policy.js';
import { RateLimiter } from './rate-limiter.js';
import { rateSettings } from './rate-settings.js';

const policyWith = (limit: Limit, extra: Parameters<typeof Resilience.default.with>[0] = {}) =>
  limitedPolicy<RateLimiter>('payments', limit, extra);

function counter() {
  let started = 0;
  return {
    work: () => {
      started++;
      return Promise.resolve('ok');
    },
    get started() {
      return started;
    },
  };
}

const error = (result: { error?: unknown }) => result.error as CallRejectedError;

describe('Limit.rate (GCRA, one process)', () => {
  it('lets `burst` calls through at once, then one per interval; the call beyond is refused after the guarded pause, its work never started, retryAfter the exact ms to the next token', async () => {
    // 2 per second, burst 2: a token every 500 ms.
    const { clock, policy, events, limiter } = policyWith(
      Limit.rate({ limit: 2, per: 1000, burst: 2 }),
    );
    const w = counter();
    await expect(policy.run(w.work)).resolves.toBe('ok');
    await expect(policy.run(w.work)).resolves.toBe('ok');
    const third = policy.tryRun(w.work);
    await clock.advance(99);
    expect(w.started).toBe(2);
    await clock.advance(1);
    const refused = await third;
    expect(refused.reason).toBe('limited');
    expect(refused.attempts).toEqual([]);
    expect(error(refused)).toBeInstanceOf(CallRejectedError);
    expect(error(refused).reason).toBe('Limited');
    // Refused at 0 ms, hint read after the 100 ms pause: the next token is due at 500 ms.
    expect(error(refused).retryAfter).toBe(400);
    expect(w.started).toBe(2);
    expect(events.filter((e) => e.isTerminal).map((e) => `${e.kind}:${e.reason}`)).toEqual([
      'succeeded:succeeded',
      'succeeded:succeeded',
      'rejected:limited',
    ]);
    await clock.advance(399);
    expect(limiter.snapshot()).toMatchObject({
      kind: 'rate',
      limit: 2,
      per: 1000,
      burst: 2,
      available: 0,
      granted: 2,
      refused: 1,
    });
    await clock.advance(1);
    expect(limiter.snapshot().available).toBe(1);
    await expect(policy.run(w.work)).resolves.toBe('ok');
    expect(w.started).toBe(3);
  });

  it('holds exactly `limit` per period under steady overload after the first burst', async () => {
    const { clock, policy } = policyWith(Limit.rate({ limit: 10, per: 1000, burst: 5 }));
    const w = counter();
    const admitted: number[] = [];
    // A call every 10 ms for 3 s (100/s offered against 10/s).
    for (let t = 0; t < 3000; t += 10) {
      const before = w.started;
      void policy.tryRun(w.work);
      if (w.started > before) admitted.push(clock.now());
      await clock.advance(10);
    }
    await clock.advance(200);
    const perSecond = [0, 1, 2].map(
      (s) => admitted.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length,
    );
    // 5 at once, then one every 100 ms: 5 + 10 in the first second (at 100..900 ms... and 1000 ms starts the next).
    expect(perSecond).toEqual([14, 10, 10]);
    expect(admitted.slice(0, 7)).toEqual([0, 10, 20, 30, 40, 100, 200]);
  });

  it('every attempt takes a token: a retry finding none is refused as Limited', async () => {
    const { clock, policy } = policyWith(Limit.rate({ limit: 1, per: 1000, burst: 1 }), {
      attempts: 3,
    });
    let calls = 0;
    const result = policy.tryRun(() => {
      calls++;
      return Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    });
    await clock.advance(100);
    const settled = await result;
    expect(calls).toBe(1);
    expect(settled.reason).toBe('limited');
    expect(error(settled).retryAfter).toBe(900);
  });

  it('with maximumWait, a call waits for its token when it comes that soon, in arrival order', async () => {
    const { clock, policy } = policyWith(
      Limit.rate({ limit: 10, per: 1000, burst: 1, maximumWait: 250 }),
    );
    const w = counter();
    const order: string[] = [];
    const calls = ['a', 'b', 'c', 'd'].map((name) =>
      policy.tryRun(async () => (await w.work(), order.push(`${name}@${clock.now()}`), name)),
    );
    // a now; b at 100, c at 200 (within 250); d's token would come at 300: refused after the pause.
    await clock.advance(100);
    await clock.advance(100);
    const results = await Promise.all(calls);
    expect(order).toEqual(['a@0', 'b@100', 'c@200']);
    expect(results.map((r) => r.reason)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'limited',
    ]);
    // Read at 100 ms, after the pause: b's token (100) and c's (200) are reserved, the next is due at 300.
    expect(error(results[3]!).retryAfter).toBe(200);
  });

  it('a waiting call leaves at once when its signal aborts: its token goes back, the listener is removed, no timer is left', async () => {
    const { clock, policy } = policyWith(
      Limit.rate({ limit: 10, per: 1000, burst: 1, maximumWait: 500 }),
    );
    const w = counter();
    await policy.run(w.work);
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (
      listeners++,
      add(...args)
    )) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (
      listeners--,
      remove(...args)
    )) as typeof remove;
    const waiting = policy.tryRun(w.work, { signal: controller.signal });
    await clock.advance(50);
    controller.abort(new Error('gone'));
    const result = await waiting;
    expect(result.reason).toBe('cancelled');
    expect(w.started).toBe(1);
    expect(listeners).toBe(0);
    expect(clock.pending).toBe(0);
    // The token it reserved (due at 100 ms) went back: the next caller gets it at 100 ms, not 200.
    const next = policy.tryRun(w.work);
    await clock.advance(50);
    expect((await next).reason).toBe('succeeded');
    expect(clock.now()).toBe(100);
  });

  it('does not wait past the deadline: a token due after it is refused at once (pause cut by the deadline)', async () => {
    const { clock, policy } = policyWith(
      Limit.rate({ limit: 1, per: 1000, burst: 1, maximumWait: 5000 }),
      { deadline: 300 },
    );
    const w = counter();
    await policy.run(w.work);
    const result = policy.tryRun(w.work);
    await clock.advance(100);
    const settled = await result;
    expect(settled.reason).toBe('limited');
    expect(error(settled).retryAfter).toBe(900);
    expect(w.started).toBe(1);
  });

  it('a keyed instance has its own bucket', async () => {
    const clock = new FakeClock();
    const limit = Limit.rate({ limit: 1, per: 1000, burst: 1 });
    const a = Resilience.default.with({ clock, limit, budget: RetryBudget.none });
    const b = a.with({});
    expect(a.limiter()).not.toBe(b.limiter());
    await expect(a.run(() => 'a')).resolves.toBe('a');
    await expect(b.run(() => 'b')).resolves.toBe('b');
  });

  it('reconfigure adopts a new rate keeping the tokens owed (no refill, no reset)', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(
      rateSettings({ limit: 10, per: 1000, burst: 10 }, 'limit'),
      clock,
    );
    for (let i = 0; i < 10; i++) expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
    expect(limiter.refusalRetryAfter()).toBe(100);
    // Now 100 per second: the bucket stays empty (10 tokens owed, owed at 10 ms each now).
    limiter.reconfigure(rateSettings({ limit: 100, per: 1000, burst: 10 }, 'limit'));
    expect(limiter.tryAcquire()).toBe(false);
    expect(limiter.refusalRetryAfter()).toBe(10);
    expect(limiter.snapshot()).toMatchObject({ limit: 100, available: 0 });
  });

  it('refuses bad options naming the field, the value and the rule', () => {
    const problem = (options: unknown) => {
      try {
        Limit.rate(options as never);
      } catch (e) {
        expect(e).toBeInstanceOf(PolicyConfigError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(problem({ limit: 0, per: 1000 })).toBe(
      'limit.rate.limit: 0 is invalid: must be an integer in [1, 1000000] (calls per period)',
    );
    expect(problem({ limit: 5 })).toBe(
      'limit.rate.per: undefined is invalid: is required: must be a duration in ms > 0 and at most a day (86400000)',
    );
    expect(problem({ limit: 5, per: -1 })).toBe(
      'limit.rate.per: -1 is invalid: must be a duration in ms > 0 and at most a day (86400000)',
    );
    expect(problem({ limit: 5, per: 1000, burst: 1.5 })).toBe(
      'limit.rate.burst: 1.5 is invalid: must be an integer in [1, 1000000] (calls that may start at once)',
    );
    expect(problem({ limit: 5, per: 1000, rate: 3 })).toBe(
      'limit.rate.rate: 3 is invalid: is not a known rate limit option (limit, per, burst, maximumWait, store, shared, key, expectedInstances, lease, storeWait, storeTimeout)',
    );
    expect(problem({ limit: 5, per: 1000, burst: 5, lease: 6 })).toBe(
      'limit.rate.lease: 6 is invalid: must be <= burst (5): a lease larger than the bucket is never granted whole',
    );
    expect(problem({ limit: 5, per: 1000, shared: true })).toBe(
      "limit.rate.shared: true is invalid: needs a store in code: pass store (e.g. new RedisRateStore(client)); shared: true is config's way to use the application's store",
    );
    expect(problem({ limit: 5, per: 1000, store: {} })).toBe(
      'limit.rate.store: {} is invalid: must be a RateStore ({ name, take(request) }), e.g. new RedisRateStore(client)',
    );
    expect(problem({ limit: 5, per: 1000 })).toBe('accepted');
    expect(Limit.rate({ limit: 5, per: 1000 }).settings).toMatchObject({
      kind: 'rate',
      limit: 5,
      per: 1000,
      burst: 5,
      maximumWait: 0,
      lease: 5,
      shared: false,
      expectedInstances: 1,
      storeWait: 5,
      storeTimeout: 250,
    });
  });
});
