import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Breaker } from '../breaker/breaker-value.js';
import { CallRejectedError } from '../errors.js';
import { FALLBACK_REASONS, Fallback } from '../fallback/fallback.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import { Limit } from './limit-value.js';

// The bulkhead, concurrency-limiter and fallback scenarios of cockatiel (src/BulkheadPolicy.test.ts),
// Polly v8 (Polly.RateLimiting.Tests' concurrency limiter, Polly.Core.Tests/Fallback) and
// resilience4j (resilience4j-bulkhead, the fallback decorators), restated in this library's API.
// Where this library decides differently the test says so and asserts ours.

/** A call of `n` that settles when told; the order of entries and exits is recorded. */
function script(clock: FakeClock) {
  const order: string[] = [];
  const pending = new Map<number, () => void>();
  const work = (n: number) => (): Promise<number> =>
    new Promise<number>((resolve) => {
      order.push(`${n}: enter`);
      pending.set(n, () => {
        order.push(`${n}: exit`);
        resolve(n);
      });
    });
  const finish = async (n: number): Promise<void> => {
    pending.get(n)!();
    await clock.advance(0);
  };
  return { order, work, finish };
}

function bulkhead(limit: number, queue = 0) {
  const clock = new FakeClock();
  const policy = Resilience.default.with({
    clock,
    attempts: 1,
    budget: RetryBudget.none,
    backoff: Backoff.none,
    limit: Limit.concurrency(limit, { queue }),
  });
  return { clock, policy, limiter: policy.limiter() as ConcurrencyLimiter };
}

describe('cockatiel: Bulkhead', () => {
  it('rejects calls after the limit is hit (ours: after the 100 ms guarded pause, CallRejectedError Limited, the work never started)', async () => {
    const { clock, policy } = bulkhead(2);
    const s = script(clock);
    const out = [0, 1, 2].map((n) => policy.tryRun(s.work(n)));
    await clock.advance(100);
    const third = await out[2]!;
    expect(third.error).toBeInstanceOf(CallRejectedError);
    expect((third.error as CallRejectedError).reason).toBe('Limited');
    await s.finish(0);
    await s.finish(1);
    expect((await out[0]!).value).toBe(0);
    expect((await out[1]!).value).toBe(1);
    expect(s.order).toEqual(['0: enter', '1: enter', '0: exit', '1: exit']);
  });

  it('queues calls first in, first out, and rejects beyond the queue', async () => {
    const { clock, policy } = bulkhead(2, 2);
    const s = script(clock);
    const out = [0, 1, 2, 3, 4].map((n) => policy.tryRun(s.work(n)));
    await clock.advance(100);
    expect((await out[4]!).reason).toBe('limited');
    await s.finish(0);
    await s.finish(1);
    await s.finish(2);
    await s.finish(3);
    expect(await Promise.all(out.slice(0, 4).map(async (call) => (await call).value))).toEqual([
      0, 1, 2, 3,
    ]);
    expect(s.order).toEqual([
      '0: enter',
      '1: enter',
      '0: exit',
      '2: enter',
      '1: exit',
      '3: enter',
      '2: exit',
      '3: exit',
    ]);
  });

  it('maintains its state: slots in flight and callers queued (ours reads inflight/queued, cockatiel free slots)', async () => {
    const { clock, policy, limiter } = bulkhead(2, 2);
    const s = script(clock);
    const readings: [number, number][] = [];
    const read = () => readings.push([limiter.inflight, limiter.queued]);
    read();
    const out = [0, 1, 2, 3].map((n) => {
      const call = policy.run(s.work(n));
      read();
      return call;
    });
    for (const n of [0, 1, 2, 3]) {
      await s.finish(n);
      await out[n];
      read();
    }
    expect(readings).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [2, 1],
      [2, 2],
      [2, 1],
      [2, 0],
      [1, 0],
      [0, 0],
    ]);
  });

  it('an aborted signal: never started; aborted while queued: leaves the queue at once, its place not consumed', async () => {
    const { clock, policy, limiter } = bulkhead(1, Infinity);
    const s = script(clock);
    const first = policy.run(s.work(0));
    const aborted = AbortSignal.abort(new Error('gone'));
    await expect(policy.run(s.work(9), { signal: aborted })).rejects.toThrow('gone');
    const controller = new AbortController();
    const queued = policy.run(s.work(1), { signal: controller.signal });
    const behind = policy.run(s.work(2));
    expect(limiter.queued).toBe(2);
    controller.abort(new Error('caller left'));
    await expect(queued).rejects.toThrow('caller left');
    expect(limiter.queued).toBe(1);
    await s.finish(0);
    await s.finish(2);
    await expect(Promise.all([first, behind])).resolves.toEqual([0, 2]);
    expect(s.order).toEqual(['0: enter', '0: exit', '2: enter', '2: exit']);
  });
});

describe('Polly: concurrency limiter (PermitLimit, QueueLimit)', () => {
  it('PermitLimit 1, QueueLimit 1: the third concurrent call is rejected (ours: CallRejectedError Limited, retryAfter the median hold once slots came back)', async () => {
    const { clock, policy } = bulkhead(1, 1);
    const s = script(clock);
    const one = policy.run(s.work(0));
    await clock.advance(40);
    await s.finish(0);
    await one;
    const held = policy.run(s.work(1));
    const queued = policy.run(s.work(2));
    const rejected = policy.tryRun(s.work(3));
    await clock.advance(100);
    const result = await rejected;
    expect((result.error as CallRejectedError).reason).toBe('Limited');
    expect((result.error as CallRejectedError).retryAfter).toBe(40); // the one slot held so far was held 40 ms
    await s.finish(1);
    await s.finish(2);
    await expect(Promise.all([held, queued])).resolves.toEqual([1, 2]);
  });

  it('a permit is returned when the work throws', async () => {
    const { policy, limiter } = bulkhead(1);
    await expect(policy.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(limiter.inflight).toBe(0);
    await expect(policy.run(() => 'next')).resolves.toBe('next');
  });
});

describe('Polly: fallback', () => {
  const failing = (clock: FakeClock, fallback: Fallback) =>
    Resilience.default.with({
      clock,
      attempts: 2,
      budget: RetryBudget.none,
      backoff: Backoff.none,
      fallback,
    });

  it('is not called when the call succeeds', async () => {
    let called = 0;
    const policy = failing(
      new FakeClock(),
      Fallback.to(() => ++called),
    );
    await expect(policy.run(() => 'ok')).resolves.toBe('ok');
    expect(called).toBe(0);
  });

  it('handles a failed outcome: the fallback value is the result, told why and after how many attempts', async () => {
    const policy = failing(
      new FakeClock(),
      Fallback.to(
        (stop) =>
          `fallback after ${stop.attempts} (${stop.reason}, ${(stop.error as Error).message})`,
      ),
    );
    await expect(policy.run(() => Promise.reject(new Error('down')))).resolves.toBe(
      'fallback after 2 (attemptsExhausted, down)',
    );
  });

  it('ShouldHandle: an outcome it does not handle passes through (ours: a Permanent answer is never handled unless listed in on)', async () => {
    const answer = Object.assign(new Error('not found'), { status: 404 });
    const classifier = Resilience.http.options.classifier;
    const clock = new FakeClock();
    const plain = failing(
      clock,
      Fallback.to(() => 'stand-in'),
    ).with({ classifier });
    await expect(plain.run(() => Promise.reject(answer))).rejects.toBe(answer);
    const listed = failing(
      clock,
      Fallback.to(() => 'stand-in', { on: [...FALLBACK_REASONS, 'permanent'] }),
    ).with({ classifier });
    await expect(listed.run(() => Promise.reject(answer))).resolves.toBe('stand-in');
  });

  it('a fallback that throws: its own error propagates (ours keeps the original as its cause)', async () => {
    const policy = failing(
      new FakeClock(),
      Fallback.to(() => {
        throw new Error('fallback failed');
      }),
    );
    const down = new Error('down');
    const error = (await policy.tryRun(() => Promise.reject(down))).error as Error;
    expect(error.message).toBe('fallback failed');
    expect(error.cause).toBe(down);
  });
});

describe('resilience4j: Bulkhead (maxConcurrentCalls, maxWaitDuration)', () => {
  it('a caller waits for a permit at most until its deadline (ours: the call deadline bounds the wait; resilience4j: maxWaitDuration)', async () => {
    const clock = new FakeClock();
    const limiter = Resilience.default
      .with({ clock, limit: Limit.concurrency(1, { queue: 1 }) })
      .limiter() as ConcurrencyLimiter;
    const patient = Resilience.default.with({
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      limit: Limit.using(limiter),
    });
    const bounded = patient.with({ deadline: 50 });
    const s = script(clock);
    const held = patient.run(s.work(0));
    const waiting = bounded.tryRun(s.work(1));
    await clock.advance(50);
    expect((await waiting).reason).toBe('deadlineExceeded');
    expect(limiter.queued).toBe(0);
    await s.finish(0);
    await expect(held).resolves.toBe(0);
    expect(s.order).toEqual(['0: enter', '0: exit']);
  });

  it('a full bulkhead refuses without calling the work, and a permit released lets the next call in', async () => {
    const { clock, policy, limiter } = bulkhead(1);
    const s = script(clock);
    const held = policy.run(s.work(0));
    const refused = policy.tryRun(s.work(1));
    await clock.advance(100);
    expect((await refused).reason).toBe('limited');
    await s.finish(0);
    await held;
    expect(limiter.inflight).toBe(0);
    const next = policy.run(s.work(2));
    await s.finish(2);
    await expect(next).resolves.toBe(2);
    expect(s.order).toEqual(['0: enter', '0: exit', '2: enter', '2: exit']);
  });
});

describe('resilience4j: fallback', () => {
  it('a refusal by an open breaker is answered by the fallback (CallNotPermittedException in resilience4j; ours: stop reason dependencyUnavailable)', async () => {
    const clock = new FakeClock();
    const reasons: string[] = [];
    const policy = Resilience.default.with({
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      breaker: Breaker.with({ consecutiveFailures: 2, breakDuration: 10_000, jitter: 'none' }),
      fallback: (stop) => {
        reasons.push(stop.reason);
        return 'cached';
      },
    });
    for (let i = 0; i < 2; i++) await policy.run(() => Promise.reject(new Error('down')));
    let started = 0;
    const refused = policy.run(() => ++started);
    await clock.advance(100);
    await expect(refused).resolves.toBe('cached');
    expect(started).toBe(0);
    expect(reasons).toEqual(['attemptsExhausted', 'attemptsExhausted', 'dependencyUnavailable']);
  });
});
