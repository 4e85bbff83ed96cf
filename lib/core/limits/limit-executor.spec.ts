import fc from 'fast-check';
import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { AttemptTimeoutError, CallRejectedError, DeadlineExceededError } from '../errors.js';
import { Drain } from '../signals/drain.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';
import { Limit } from './limit-value.js';
import { limitedPolicy } from '../../../test/support/limited-policy.js';

class Down extends Error {
  override name = 'Down';
}

/** Work that settles when told: `release(i)` resolves call i's current attempt, `fail(i)` rejects it. */
function gate(clock: FakeClock) {
  const pending: {
    resolve: (v: string) => void;
    reject: (e: unknown) => void;
    signal: AbortSignal;
  }[] = [];
  let started = 0;
  const work = ({ signal }: { signal: AbortSignal }) =>
    new Promise<string>((resolve, reject) => {
      started++;
      pending.push({ resolve, reject, signal });
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  return {
    work,
    pending,
    get started() {
      return started;
    },
    clock,
  };
}

const policyWith = (limit: Limit, extra: Parameters<typeof Resilience.default.with>[0] = {}) =>
  limitedPolicy<ConcurrencyLimiter>('prices', limit, extra);

describe('executor with a concurrency limit (bulkhead)', () => {
  it('refuses a call beyond the limit with an empty queue after the guarded pause, as Limited, without starting its work', async () => {
    const { clock, policy, limiter, events } = policyWith(Limit.concurrency(2));
    const g = gate(clock);
    const a = policy.run(g.work);
    const b = policy.run(g.work);
    const c = policy.tryRun(g.work);
    await clock.advance(99);
    expect(g.started).toBe(2);
    expect(limiter.inflight).toBe(2);
    await clock.advance(1);
    const refused = await c;
    expect(g.started).toBe(2);
    expect(refused.reason).toBe('limited');
    expect(refused.attempts).toEqual([]);
    expect(refused.error).toBeInstanceOf(CallRejectedError);
    expect((refused.error as CallRejectedError).reason).toBe('Limited');
    // No slot has come back yet: nothing is known about when one will.
    expect((refused.error as CallRejectedError).retryAfter).toBeUndefined();
    expect(events.filter((e) => e.isTerminal).map((e) => `${e.kind}:${e.reason}`)).toEqual([
      'rejected:limited',
    ]);
    await clock.advance(40);
    g.pending[0]!.resolve('a');
    g.pending[1]!.resolve('b');
    await expect(Promise.all([a, b])).resolves.toEqual(['a', 'b']);
    expect(limiter.inflight).toBe(0);
    // Now the hint is the median time a slot was held (140 ms).
    const d = policy.run(g.work);
    const e = policy.run(g.work);
    const f = policy.run(g.work).catch((error: CallRejectedError) => error);
    await clock.advance(100);
    expect(((await f) as CallRejectedError).retryAfter).toBe(140);
    g.pending[2]!.resolve('d');
    g.pending[3]!.resolve('e');
    await Promise.all([d, e]);
  });

  it('queues FIFO up to `queue`: a queued call starts when a slot comes back, time queued counted in its duration', async () => {
    const { clock, policy, limiter } = policyWith(Limit.concurrency(1, { queue: 2 }));
    const g = gate(clock);
    const order: string[] = [];
    const calls = ['a', 'b', 'c'].map((name) =>
      policy.tryRun(async (ctx) => (order.push(name), g.work(ctx))),
    );
    const d = policy.tryRun(g.work);
    await clock.advance(100);
    expect((await d).reason).toBe('limited'); // the queue was full
    expect(order).toEqual(['a']);
    expect(limiter.queued).toBe(2);
    g.pending[0]!.resolve('1');
    await clock.advance(0);
    expect(order).toEqual(['a', 'b']);
    await clock.advance(50);
    g.pending[1]!.resolve('2');
    await clock.advance(0);
    expect(order).toEqual(['a', 'b', 'c']);
    g.pending[2]!.resolve('3');
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value)).toEqual(['1', '2', '3']);
    expect(results.map((r) => r.duration)).toEqual([100, 150, 150]);
    // The attempt's own duration starts when the slot came, not when the call did.
    expect(results[2]!.attempts[0]!.duration).toBe(0);
    expect(limiter.inflight).toBe(0);
  });

  it('a queued caller whose signal aborts leaves at once with the reason; its work never starts', async () => {
    const { clock, policy, limiter } = policyWith(Limit.concurrency(1, { queue: 5 }));
    const g = gate(clock);
    const first = policy.run(g.work);
    const controller = new AbortController();
    const queued = policy.tryRun(g.work, { signal: controller.signal });
    await clock.advance(10);
    const reason = new Error('user left');
    controller.abort(reason);
    const result = await queued;
    expect(result.reason).toBe('cancelled');
    expect(result.error).toBe(reason);
    expect(limiter.queued).toBe(0);
    expect(g.started).toBe(1);
    g.pending[0]!.resolve('x');
    await first;
    expect(limiter.inflight).toBe(0);
  });

  it('a queued caller whose deadline passes leaves then with DeadlineExceededError; time queued counts against the deadline', async () => {
    const { clock, policy, limiter } = policyWith(Limit.concurrency(1, { queue: 5 }));
    const bounded = policy.with({ deadline: 250, limit: Limit.using(limiter) });
    const g = gate(clock);
    const first = policy.tryRun(g.work);
    await clock.advance(100);
    const queued = bounded.tryRun(g.work);
    await clock.advance(249);
    expect(limiter.queued).toBe(1);
    await clock.advance(1);
    const result = await queued;
    expect(result.reason).toBe('deadlineExceeded');
    expect(result.error).toBeInstanceOf(DeadlineExceededError);
    expect(result.duration).toBe(250);
    expect(g.started).toBe(1);
    expect(limiter.queued).toBe(0);
    g.pending[0]!.resolve('x');
    await first;
    expect(limiter.inflight).toBe(0);
  });

  it('holds a slot per attempt: a call waiting in backoff holds none', async () => {
    const { clock, policy, limiter } = policyWith(Limit.concurrency(1), {
      backoff: Backoff.constant(1000),
      attempts: 2,
    });
    const g = gate(clock);
    const retried = policy.tryRun(g.work);
    g.pending[0]!.reject(new Down('down'));
    await clock.advance(10);
    expect(limiter.inflight).toBe(0);
    const other = policy.run(async () => 'other');
    await expect(other).resolves.toBe('other');
    await clock.advance(1000);
    expect(limiter.inflight).toBe(1);
    g.pending[1]!.resolve('second');
    expect((await retried).value).toBe('second');
    expect(limiter.inflight).toBe(0);
  });

  it('held per call (the measured alternative), the slot stays taken through backoff and retries and comes back once, timed over the whole call', async () => {
    const { clock, policy, limiter } = policyWith(Limit.concurrency(1).heldPerCall(), {
      backoff: Backoff.constant(1000),
      attempts: 2,
    });
    const g = gate(clock);
    const retried = policy.tryRun(g.work);
    await clock.advance(30);
    g.pending[0]!.reject(new Down('down'));
    await clock.advance(10);
    expect(limiter.inflight).toBe(1);
    // Refused after the guarded pause: the call in backoff still holds the only slot.
    const other = policy.tryRun(async () => 'other');
    await clock.advance(100);
    expect((await other).reason).toBe('limited');
    await clock.advance(890);
    expect(limiter.inflight).toBe(1);
    expect(g.started).toBe(2);
    await clock.advance(20);
    g.pending[1]!.resolve('second');
    expect((await retried).value).toBe('second');
    expect(limiter.inflight).toBe(0);
    // Held from 0 to 1050 ms: the whole call (attempts 30 and 20 ms, backoff 1000 ms).
    expect(limiter.refusalRetryAfter()).toBe(1050);
  });

  it('held per call, a retry the breaker refuses gives the slot back with the call', async () => {
    const { clock, policy, limiter } = policyWith(Limit.concurrency(1).heldPerCall(), {
      attempts: 2,
      backoff: Backoff.constant(10),
      breaker: Breaker.with({ consecutiveFailures: 1 }),
    });
    // The breaker opens on the first failure: the retry is refused after the guarded pause.
    const refused = policy.tryRun(async () => {
      throw new Down('down');
    });
    await clock.advance(5);
    expect(limiter.inflight).toBe(1);
    await clock.advance(105);
    expect((await refused).reason).toBe('dependencyUnavailable');
    expect(limiter.inflight).toBe(0);
  });

  it('heldPerCall is for concurrency limits only', () => {
    expect(() => Limit.rate({ limit: 10, per: 1000 }).heldPerCall()).toThrow(
      'limit: "Limit.rate(options)" is invalid: must be Limit.concurrency or Limit.adaptive to hold its slots per call',
    );
  });

  it.each([
    ['per attempt', false],
    ['per call', true],
  ])(
    'held %s, gives the slot back on every outcome: success, Permanent, exhausted Transient, attempt timeout, caller abort and drain during backoff',
    async (_hold, perCall) => {
      const drain = new Drain();
      const limit = Limit.concurrency(1);
      const { clock, policy, limiter } = policyWith(perCall ? limit.heldPerCall() : limit, {
        attempts: 2,
        attemptTimeout: 50,
        drain,
        backoff: Backoff.constant(10),
      });
      // What a call waiting in backoff holds.
      const inBackoff = perCall ? 1 : 0;
      const failing = async () => {
        throw new Down('down');
      };
      expect((await policy.tryRun(async () => 1)).reason).toBe('succeeded');
      expect(limiter.inflight).toBe(0);
      const permanent = await policy.tryRun(async () => {
        throw new TypeError('bug');
      });
      expect(permanent.reason).toBe('permanent');
      expect(limiter.inflight).toBe(0);
      const exhausted = policy.tryRun(failing);
      await clock.advance(5);
      expect(limiter.inflight).toBe(inBackoff);
      await clock.advance(5);
      expect((await exhausted).reason).toBe('attemptsExhausted');
      expect(limiter.inflight).toBe(0);
      const g = gate(clock);
      const timedOut = policy.tryRun(g.work, { attempts: 1 });
      await clock.advance(50);
      expect((await timedOut).error).toBeInstanceOf(AttemptTimeoutError);
      expect(limiter.inflight).toBe(0);
      const controller = new AbortController();
      const aborted = policy.tryRun(g.work, { signal: controller.signal });
      controller.abort(new Error('gone'));
      expect((await aborted).reason).toBe('cancelled');
      expect(limiter.inflight).toBe(0);
      const abortedInBackoff = new AbortController();
      const cancelled = policy.tryRun(failing, { signal: abortedInBackoff.signal });
      await clock.advance(5);
      expect(limiter.inflight).toBe(inBackoff);
      abortedInBackoff.abort(new Error('gone'));
      expect((await cancelled).reason).toBe('cancelled');
      expect(limiter.inflight).toBe(0);
      const draining = policy.tryRun(failing);
      await clock.advance(5);
      expect(limiter.inflight).toBe(inBackoff);
      drain.start();
      expect((await draining).reason).toBe('draining');
      expect(limiter.inflight).toBe(0);
    },
  );

  it('no slot ever leaks through the executor, held per attempt or per call: random outcomes, timeouts, aborts and queueing leave 0 in flight, an empty queue, every call settled', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 200 }),
            outcome: fc.constantFrom('ok', 'transient', 'permanent', 'hang'),
            duration: fc.integer({ min: 0, max: 120 }),
            abortAt: fc.option(fc.integer({ min: 0, max: 300 })),
          }),
          { maxLength: 25 },
        ),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.boolean(),
        async (plan, n, queue, adaptive, perCall) => {
          const clock = new FakeClock();
          const limit = adaptive
            ? Limit.adaptive({ initial: n, maximum: 5, queue })
            : Limit.concurrency(n, { queue });
          const policy = Resilience.default.with({
            clock,
            random: () => 0.3,
            limit: perCall ? limit.heldPerCall() : limit,
            attemptTimeout: 100,
            deadline: 400,
            budget: RetryBudget.none,
            backoff: Backoff.constant(20),
          });
          const limiter = policy.limiter() as ConcurrencyLimiter;
          const results: Promise<unknown>[] = [];
          for (const step of plan) {
            const controller = new AbortController();
            if (step.abortAt !== null)
              clock.setTimer(step.abortAt, () => controller.abort(new Error('abort')));
            clock.setTimer(step.at, () => {
              results.push(
                policy.tryRun(
                  ({ signal }) =>
                    new Promise((resolve, reject) => {
                      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
                      if (step.outcome === 'hang') return;
                      clock.setTimer(step.duration, () =>
                        step.outcome === 'ok'
                          ? resolve(1)
                          : reject(
                              step.outcome === 'permanent' ? new TypeError('p') : new Down('t'),
                            ),
                      );
                    }),
                  { signal: controller.signal },
                ),
              );
            });
          }
          await clock.runAll();
          const settled = await Promise.all(results);
          expect(settled).toHaveLength(plan.length);
          expect(limiter.inflight).toBe(0);
          expect(limiter.queued).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('fallback', () => {
  it('answers a Limited refusal with its value, told the reason, the error and the attempts; one terminal event says the fallback served it', async () => {
    const { clock, policy, events } = policyWith(Limit.concurrency(1), {
      fallback: (stop) =>
        `cached (${stop.reason}, ${(stop.error as CallRejectedError).reason}, ${stop.attempts})`,
    });
    const g = gate(clock);
    const first = policy.run(g.work);
    const second = policy.run(g.work);
    await clock.advance(100);
    await expect(second).resolves.toBe('cached (limited, Limited, 0)');
    const terminal = events.filter((e) => e.isTerminal);
    expect(terminal.map((e) => [e.kind, e.reason, e.error, e.fallback])).toEqual([
      ['rejected', 'limited', 'CallRejectedError', 'served'],
    ]);
    g.pending[0]!.resolve('fresh');
    await expect(first).resolves.toBe('fresh');
    expect(events.filter((e) => e.isTerminal).map((e) => e.fallback)).toEqual([
      'served',
      undefined,
    ]);
  });

  it('answers attempts exhausted on Transient failures and the deadline; never a Permanent answer unless listed', async () => {
    const clock = new FakeClock();
    const base = Resilience.default.with({
      clock,
      random: () => 0.5,
      budget: RetryBudget.none,
      backoff: Backoff.none,
    });
    const seen: string[] = [];
    const fallback = (stop: { reason: string; attempts: number }) => (
      seen.push(`${stop.reason}/${stop.attempts}`),
      'stand-in'
    );
    let calls = 0;
    const down = async () => {
      calls++;
      throw new Down('down');
    };
    await expect(base.with({ fallback }).run(down)).resolves.toBe('stand-in');
    expect(calls).toBe(3);
    const notFound = new TypeError('404');
    await expect(base.with({ fallback }).run(async () => Promise.reject(notFound))).rejects.toBe(
      notFound,
    );
    const slow = base.with({ fallback, deadline: 50 }).run(() => new Promise(() => {}));
    await clock.advance(50);
    await expect(slow).resolves.toBe('stand-in');
    const { Fallback, FALLBACK_REASONS } = await import('../fallback/fallback.js');
    await expect(
      base
        .with({ fallback: Fallback.to(fallback, { on: [...FALLBACK_REASONS, 'permanent'] }) })
        .run(async () => Promise.reject(notFound)),
    ).resolves.toBe('stand-in');
    expect(seen).toEqual(['attemptsExhausted/3', 'deadlineExceeded/1', 'permanent/1']);
  });

  it('a throwing fallback rejects with its own error, the original as its cause; tryRun says it failed (a served call: served)', async () => {
    const clock = new FakeClock();
    const original = new Down('down');
    const own = new Error('no cache either');
    const policy = Resilience.default.with({
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      fallback: () => {
        throw own;
      },
    });
    const result = await policy.tryRun(async () => Promise.reject(original));
    expect(result.error).toBe(own);
    expect(own.cause).toBe(original);
    expect(result.fallback).toBe('failed');
    expect(result.reason).toBe('attemptsExhausted');
    const served = await Resilience.default
      .with({ clock, attempts: 1, budget: RetryBudget.none, fallback: async () => 'later' })
      .tryRun(async () => Promise.reject(original));
    expect([served.ok, served.value, served.error, served.fallback]).toEqual([
      false,
      'later',
      undefined,
      'served',
    ]);
  });
});
