import { getEventListeners } from 'node:events';
import { Backoff } from '../backoff/backoff.js';
import { Classifier } from '../classification/classifier.js';
import {
  AttemptTimeoutError,
  CallRejectedError,
  DeadlineExceededError,
  PolicyConfigError,
  RateLimitedError,
} from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Verdict } from '../classification/verdict.js';

class Flaky extends Error {
  override name = 'Flaky';
}

/** A function failing `failures` times, then returning `value`; records the attempts it saw. */
function failing<T>(failures: number, value: T) {
  const seen: number[] = [];
  const fn = ({ attempt }: { attempt: number }) => {
    seen.push(attempt);
    if (seen.length <= failures) return Promise.reject(new Flaky(`fail ${seen.length}`));
    return Promise.resolve(value);
  };
  return { fn, seen };
}

function setup(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({ name: 'payments', clock, random: () => 0.5, budget: RetryBudget.none, ...extra })
    .withListener((e) => events.push(e));
  return { clock, events, policy };
}

describe('attempts and backoff', () => {
  it('retries twice with jittered exponential delays, then succeeds', async () => {
    const { clock, events, policy } = setup();
    const { fn, seen } = failing(2, 'paid');
    const call = policy.tryRun(fn);
    await clock.advance(49);
    expect(seen).toEqual([1]);
    await clock.advance(1);
    expect(seen).toEqual([1, 2]);
    await clock.advance(99);
    expect(seen).toEqual([1, 2]);
    await clock.advance(1);
    const result = await call;
    expect(seen).toEqual([1, 2, 3]);
    expect(result).toMatchObject({ ok: true, value: 'paid', reason: 'succeeded', duration: 150 });
    expect(result.attempts.map((a) => [a.attempt, a.verdict, a.delay])).toEqual([
      [1, 'Transient', 50],
      [2, 'Transient', 100],
      [3, 'Ok', 0],
    ]);
    expect(events.map((e) => e.kind)).toEqual([
      'attempt',
      'retrying',
      'attempt',
      'retrying',
      'attempt',
      'succeeded',
    ]);
    expect(events.filter((e) => e.isTerminal)).toHaveLength(1);
    expect(events.map(String)).toEqual([
      '[payments] Attempt #1 Transient (0ms) Flaky',
      '[payments] Retrying #1 Transient (0ms) +50ms Flaky',
      '[payments] Attempt #2 Transient (0ms) Flaky',
      '[payments] Retrying #2 Transient (0ms) +100ms Flaky',
      '[payments] Attempt #3 Ok (0ms)',
      '[payments] Succeeded #3 (150ms)',
    ]);
  });

  it('stops after the configured attempts with the last error', async () => {
    const { clock, events, policy } = setup({ backoff: Backoff.none, attempts: 4 });
    const { fn, seen } = failing(10, 'never');
    const call = policy.tryRun(fn);
    await clock.runAll();
    const result = await call;
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(result.reason).toBe('attemptsExhausted');
    expect((result.error as Error).message).toBe('fail 4');
    expect(events.at(-1)!.toString()).toBe(
      '[payments] Failed #4 Transient (0ms) attemptsExhausted Flaky',
    );
  });

  it('stops on a final verdict with reason notRepeatable while attempts are left, attemptsExhausted when none are', async () => {
    const classifier = Classifier.of(() => Verdict.final(Verdict.transient));
    for (const [attempts, reason] of [
      [3, 'notRepeatable'],
      [1, 'attemptsExhausted'],
    ] as const) {
      const { events, policy } = setup({ classifier, attempts });
      const { fn, seen } = failing(10, 'never');
      const result = await policy.tryRun(fn);
      expect([seen, result.reason, result.attempts.map((a) => a.verdict)]).toEqual([
        [1],
        reason,
        ['Transient'],
      ]);
      expect(events.at(-1)!.toString()).toBe(
        `[payments] Failed #1 Transient (0ms) ${reason} Flaky`,
      );
    }
  });

  it('does not retry Permanent errors (TypeError, RangeError, PolicyConfigError)', async () => {
    for (const error of [
      new TypeError('t'),
      new RangeError('r'),
      new PolicyConfigError('f', 1, 'rule'),
    ]) {
      const { policy } = setup();
      let calls = 0;
      const result = await policy.tryRun(() => {
        calls++;
        throw error;
      });
      expect([calls, result.reason, result.error]).toEqual([1, 'permanent', error]);
    }
  });

  it('custom classifier rules: first match wins, defaults decide the rest', async () => {
    const classifier = Classifier.of(
      Classifier.when(Flaky, Verdict.permanent),
      Classifier.when(Error, Verdict.transient),
      (outcome) => (outcome.ok && outcome.value === 'busy' ? Verdict.transient : undefined),
    );
    const { clock, policy } = setup({ classifier, backoff: Backoff.none });
    const flaky = failing(5, 'x');
    expect((await policy.tryRun(flaky.fn)).reason).toBe('permanent');
    expect(flaky.seen).toEqual([1]);
    let n = 0;
    const busy = policy.tryRun(() => (++n < 3 ? 'busy' : 'done'));
    await clock.runAll();
    expect(await busy).toMatchObject({ ok: true, value: 'done' });
    const exhausted = await policy.tryRun(() => 'busy');
    expect(exhausted).toMatchObject({
      ok: false,
      value: 'busy',
      reason: 'attemptsExhausted',
      error: undefined,
    });
    await expect(policy.run(() => 'busy')).resolves.toBe('busy');
  });

  it('a self-imposed refusal is Limited and stops the call whatever the classifier says', async () => {
    const { policy } = setup({ classifier: Classifier.of(() => Verdict.transient) });
    const result = await policy.tryRun(() => Promise.reject(new RateLimitedError()));
    expect(result.reason).toBe('limited');
    expect(result.attempts.map((a) => a.verdict)).toEqual(['Limited']);
  });

  it('rejects run() with the final error', async () => {
    const { clock, policy } = setup({ backoff: Backoff.none });
    const call = policy.run(failing(9, 0).fn);
    const assertion = expect(call).rejects.toThrow('fail 3');
    await clock.runAll();
    await assertion;
  });
});

describe('server pushback', () => {
  const throttled = (ms: number) =>
    Classifier.of((outcome) => (!outcome.ok ? Verdict.throttled(ms) : undefined));

  it('waits exactly the requested time, without jitter', async () => {
    const { clock, policy } = setup({ classifier: throttled(3000) });
    const { fn, seen } = failing(1, 'ok');
    const call = policy.tryRun(fn);
    await clock.advance(2999);
    expect(seen).toEqual([1]);
    await clock.advance(1);
    expect((await call).attempts[0]!.delay).toBe(3000);
  });

  it('is capped by maximumDelay', async () => {
    const { clock, policy } = setup({
      classifier: throttled(120_000),
      backoff: Backoff.exponential({ maximumDelay: 5000 }),
    });
    const call = policy.tryRun(failing(1, 'ok').fn);
    await clock.advance(5000);
    expect((await call).attempts[0]!.delay).toBe(5000);
  });

  it('stops at once with the last failure when the wait cannot fit before the deadline', async () => {
    const { clock, policy, events } = setup({ classifier: throttled(5000), deadline: 3000 });
    const result = await policy.tryRun(failing(1, 'ok').fn);
    expect(clock.now()).toBe(0);
    expect(result).toMatchObject({ ok: false, reason: 'deadlineExceeded' });
    expect((result.error as Error).message).toBe('fail 1');
    expect(events.map((e) => e.kind)).toEqual(['attempt', 'failed']);
    expect(clock.pending).toBe(0);
  });
});

describe('retry budget', () => {
  it('only retries spend; the first attempt is never refused', async () => {
    const budget = RetryBudget.of({ fraction: 0, minimumPerSecond: 0 });
    const { clock, policy } = setup({ budget, backoff: Backoff.none });
    const bucket = budget.resolve(policy, clock)!;
    while (bucket.tryAcquire());
    let calls = 0;
    const result = await policy.tryRun(() => {
      calls++;
      return 'ok';
    });
    expect([calls, result.ok]).toEqual([1, true]);
  });

  it('refuses after the guarded 100 ms pause with a hint computed after the pause', async () => {
    const budget = RetryBudget.of({ fraction: 0.1, minimumPerSecond: 3 });
    const { clock, policy, events } = setup({ budget, backoff: Backoff.none });
    const bucket = policy.bucket()!;
    for (let i = 0; i < 15; i++) {
      const call = policy.tryRun(failing(2, 'ok').fn);
      await clock.runAll();
      expect((await call).attempts).toHaveLength(3);
    }
    // 15 calls × (2 retries spent, 1 success deposited 0.1) = 30 − 30 + 1.5
    expect(bucket.level).toBeCloseTo(1.5, 10);
    await policy.tryRun(failing(1, 'ok').fn);
    expect(bucket.level).toBeCloseTo(0.6, 10);
    events.length = 0;
    let settled = false;
    const refused = policy.tryRun(failing(5, 'ok').fn).then((r) => ((settled = true), r));
    await clock.advance(99);
    expect(settled).toBe(false);
    await clock.advance(1);
    const result = await refused;
    expect(result.reason).toBe('budgetExhausted');
    expect(result.attempts).toHaveLength(1);
    const error = result.error as CallRejectedError;
    expect(error).toBeInstanceOf(CallRejectedError);
    expect(error.reason).toBe('BudgetExhausted');
    // After the pause the bucket holds 0.6 + 0.3; the floor needs 0.1 / 3 per second more.
    expect(error.retryAfter).toBeCloseTo(33.333, 2);
    expect((error.cause as Error).message).toBe('fail 1');
    expect(events.map((e) => e.kind)).toEqual(['attempt', 'rejected']);
    expect(String(events[1])).toBe(
      '[payments] Rejected #1 Transient (100ms) budgetExhausted CallRejectedError',
    );
  });

  it('has no retryAfter hint when the floor is 0', async () => {
    const budget = RetryBudget.of({ fraction: 0.1, minimumPerSecond: 0 });
    const { clock, policy } = setup({ budget, backoff: Backoff.none });
    while (policy.bucket()!.tryAcquire());
    const call = policy.tryRun(failing(5, 'ok').fn);
    await clock.advance(100);
    const error = (await call).error as CallRejectedError;
    expect(error.reason).toBe('BudgetExhausted');
    expect(error.retryAfter).toBeUndefined();
  });

  it('the guarded pause is bounded by the deadline', async () => {
    const budget = RetryBudget.of({ fraction: 0, minimumPerSecond: 0 });
    const { clock, policy } = setup({ budget, backoff: Backoff.constant(10), deadline: 50 });
    while (policy.bucket()!.tryAcquire());
    const call = policy.tryRun(failing(5, 'ok').fn);
    await clock.advance(50);
    const result = await call;
    expect(result.reason).toBe('budgetExhausted');
    expect(result.duration).toBe(50);
  });

  it('Limited outcomes neither spend nor deposit', async () => {
    const budget = RetryBudget.of({ minimumPerSecond: 1 });
    const { policy } = setup({ budget });
    policy.bucket()!.tryAcquire();
    await policy.tryRun(() => Promise.reject(new RateLimitedError()));
    expect(policy.bucket()!.level).toBe(9);
  });

  it('automatic budget: each policy value has its own bucket, created full', async () => {
    const a = Resilience.default.with({ clock: new FakeClock() });
    const b = a.with({ name: 'b' });
    expect(a.bucket()).not.toBe(b.bucket());
    expect(a.bucket()!.level).toBe(30);
  });
});

describe('deadline and attempt timeout', () => {
  const hang = (signals: AbortSignal[]) => (ctx: { signal: AbortSignal }) =>
    new Promise<never>((_, reject) => {
      signals.push(ctx.signal);
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
    });

  it('aborts the attempt signal at the deadline and starts no attempt after it', async () => {
    const { clock, policy } = setup({ deadline: 1000, backoff: Backoff.none });
    const signals: AbortSignal[] = [];
    const call = policy.tryRun(hang(signals));
    await clock.advance(999);
    expect(signals[0]!.aborted).toBe(false);
    await clock.advance(1);
    const result = await call;
    expect(signals).toHaveLength(1);
    expect(signals[0]!.reason).toBeInstanceOf(DeadlineExceededError);
    expect(result).toMatchObject({ ok: false, reason: 'deadlineExceeded', duration: 1000 });
    expect(result.error).toBeInstanceOf(DeadlineExceededError);
    expect(clock.pending).toBe(0);
  });

  it('settles at the deadline even when the work ignores its signal', async () => {
    const { clock, policy } = setup({ deadline: 200 });
    const call = policy.tryRun(() => new Promise(() => undefined));
    await clock.advance(200);
    expect((await call).reason).toBe('deadlineExceeded');
  });

  it('an attempt timeout is Transient and retried; the deadline then ends the call', async () => {
    const { clock, policy } = setup({ attemptTimeout: 100, deadline: 250, backoff: Backoff.none });
    const signals: AbortSignal[] = [];
    const call = policy.tryRun(hang(signals));
    await clock.advance(250);
    const result = await call;
    expect(result.attempts.map((a) => [a.verdict, a.duration, (a.error as Error).name])).toEqual([
      ['Transient', 100, 'AttemptTimeoutError'],
      ['Transient', 100, 'AttemptTimeoutError'],
      ['Transient', 50, 'DeadlineExceededError'],
    ]);
    expect(signals[0]!.reason).toBeInstanceOf(AttemptTimeoutError);
    expect(result.reason).toBe('deadlineExceeded');
  });

  it('does not sleep into a deadline it cannot meet', async () => {
    const { clock, policy } = setup({ deadline: 120, backoff: Backoff.constant(200) });
    const result = await policy.tryRun(failing(1, 'ok').fn);
    expect([result.reason, clock.now(), (result.error as Error).message]).toEqual([
      'deadlineExceeded',
      0,
      'fail 1',
    ]);
  });
});

describe('cancellation', () => {
  it('a signal already aborted: no attempt, rejects with its reason', async () => {
    const { policy, events } = setup();
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    let calls = 0;
    await expect(policy.run(() => ++calls, { signal: controller.signal })).rejects.toBe(reason);
    expect(calls).toBe(0);
    expect(events.map(String)).toEqual(['[payments] Failed (0ms) cancelled Error']);
  });

  it('aborted during an attempt: that attempt only, no retry', async () => {
    const { policy } = setup();
    const controller = new AbortController();
    let calls = 0;
    const result = await policy.tryRun(
      (ctx) => {
        calls++;
        const done = new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
        controller.abort(new Error('user left'));
        return done;
      },
      { signal: controller.signal },
    );
    expect([calls, result.reason, (result.error as Error).message]).toEqual([
      1,
      'cancelled',
      'user left',
    ]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('aborted during a 3000 ms server-requested wait: rejects at once and clears the timer', async () => {
    const classifier = Classifier.of(() => Verdict.throttled(3000));
    const { clock, policy } = setup({ classifier });
    const controller = new AbortController();
    const call = policy.tryRun(failing(1, 'ok').fn, { signal: controller.signal });
    await clock.advance(10);
    expect(clock.pending).toBe(1);
    controller.abort(new Error('stop'));
    const result = await call;
    expect([result.reason, (result.error as Error).message, clock.now(), clock.pending]).toEqual([
      'cancelled',
      'stop',
      10,
      0,
    ]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('1000 calls sharing one signal leave it with the listeners it started with, and no warning', async () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({
      clock,
      budget: RetryBudget.none,
      backoff: Backoff.constant(5),
    });
    const controller = new AbortController();
    const own = () => undefined;
    controller.signal.addEventListener('abort', own);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const calls = Array.from({ length: 1000 }, () => {
        let n = 0;
        return policy.run(
          (ctx) => {
            void ctx.signal;
            return ++n <= 2 ? Promise.reject(new Flaky('x')) : Promise.resolve(n);
          },
          { signal: controller.signal },
        );
      });
      await clock.advance(5);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(2);
      await clock.advance(5);
      expect(await Promise.all(calls)).toEqual(Array(1000).fill(3));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    expect(getEventListeners(controller.signal, 'abort')).toEqual([own]);
  });
});

describe('events and configuration', () => {
  it('a throwing listener is swallowed', async () => {
    const policy = Resilience.default.with({
      onEvent: () => {
        throw new Error('listener');
      },
    });
    await expect(policy.run(() => 7)).resolves.toBe(7);
  });

  it('withListener adds; onEvent in with() replaces', async () => {
    const seen: string[] = [];
    const policy = Resilience.default
      .withListener(() => seen.push('a'))
      .withListener(() => seen.push('b'));
    await policy.run(() => 1);
    expect(seen).toEqual(['a', 'b', 'a', 'b']);
    seen.length = 0;
    await policy.with({ onEvent: () => seen.push('c') }).run(() => 1);
    expect(seen).toEqual(['c', 'c']);
  });

  it('presets carry the documented numbers', () => {
    expect(Resilience.default.options).toMatchObject({
      attempts: 3,
      deadline: undefined,
      budget: RetryBudget.automatic,
    });
    expect(Resilience.http.options.deadline).toBe(30_000);
  });

  it.each([
    [{ attempts: 0 }, 'attempts: 0 is invalid: must be an integer >= 1'],
    [{ attempts: 2.5 }, 'attempts: 2.5 is invalid'],
    [
      { deadline: -1 },
      'deadline: -1 is invalid: must be a duration in ms > 0 (Infinity, or leaving it out, for no bound)',
    ],
    [{ attemptTimeout: -10 }, 'attemptTimeout: -10 is invalid'],
    [{ retries: 3 }, 'retries: 3 is invalid: is not a known policy option'],
    [{ budget: 0.5 }, 'budget: 0.5 is invalid: must be a RetryBudget'],
  ])('with(%p) throws PolicyConfigError', (changes, message) => {
    expect(() => Resilience.default.with(changes as never)).toThrow(PolicyConfigError);
    expect(() => Resilience.default.with(changes as never)).toThrow(message);
  });
});

describe('default classifier and network failures', () => {
  it("retries fetch's network failure (TypeError with a socket error cause) but not a plain TypeError", async () => {
    const { clock, policy } = setup({ backoff: Backoff.none });
    let calls = 0;
    const call = policy.tryRun(() => {
      calls++;
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    });
    await clock.runAll();
    expect([(await call).reason, calls]).toEqual(['attemptsExhausted', 3]);
  });
});

describe('robustness', () => {
  it('reports the deadline, not the attempt timeout, when both fall due together', async () => {
    const { clock, policy } = setup({
      deadline: 300,
      attemptTimeout: 100,
      attempts: 5,
      backoff: Backoff.none,
    });
    const call = policy.tryRun(() => new Promise(() => undefined));
    await clock.advance(400);
    const result = await call;
    expect([
      result.reason,
      (result.error as Error).name,
      result.attempts.length,
      result.duration,
    ]).toEqual(['deadlineExceeded', 'DeadlineExceededError', 3, 300]);
  });

  it('a throwing classifier rule ends the call with its error and one terminal event', async () => {
    const bug = new Error('rule bug');
    const { policy, events } = setup({
      classifier: Classifier.of(() => {
        throw bug;
      }),
    });
    const result = await policy.tryRun(() => 1);
    expect([result.reason, result.error]).toEqual(['permanent', bug]);
    expect(events.filter((e) => e.isTerminal).map((e) => e.kind)).toEqual(['failed']);
  });

  it('a throwing custom backoff ends the call with its error and one terminal event', async () => {
    const bug = new Error('curve bug');
    const { policy, events } = setup({
      backoff: Backoff.custom(() => {
        throw bug;
      }),
    });
    const result = await policy.tryRun(failing(1, 'ok').fn);
    expect([result.reason, result.error, result.attempts.length]).toEqual(['permanent', bug, 1]);
    expect(events.filter((e) => e.isTerminal)).toHaveLength(1);
  });
});

describe('the unreported fast path (no listener, bound or breaker)', () => {
  const quiet = (extra: Parameters<typeof Resilience.default.with>[0] = {}) =>
    Resilience.default.with({
      clock: new FakeClock(),
      budget: RetryBudget.of({ minimumPerSecond: 1 }),
      backoff: Backoff.none,
      ...extra,
    });

  it('carries a failed first attempt into the retry loop', async () => {
    const policy = quiet();
    const { fn, seen } = failing(2, 'paid');
    await expect(policy.run(fn)).resolves.toBe('paid');
    expect(seen).toEqual([1, 2, 3]);
    expect(policy.bucket()!.level).toBeCloseTo(8.1, 10);
  });

  it('classifies a first value through custom rules and retries it', async () => {
    let n = 0;
    const policy = quiet({
      classifier: Classifier.of((outcome) =>
        outcome.ok && outcome.value === 'busy' ? Verdict.transient : undefined,
      ),
    });
    await expect(policy.run(() => (++n < 2 ? 'busy' : 'done'))).resolves.toBe('done');
    expect(n).toBe(2);
  });

  it('a caller abort during the first attempt rejects with its reason and never retries', async () => {
    const controller = new AbortController();
    let calls = 0;
    const call = quiet().run(
      (ctx) => {
        calls++;
        const done = new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
        controller.abort(new Error('gone'));
        return done;
      },
      { signal: controller.signal },
    );
    await expect(call).rejects.toThrow('gone');
    expect(calls).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('nested policies', () => {
  it("an inner policy's DeadlineExceededError is an ordinary failure of the outer call, classified and retried", async () => {
    const clock = new FakeClock();
    const inner = Resilience.default.with({
      clock,
      attempts: 1,
      deadline: 50,
      budget: RetryBudget.none,
    });
    const outer = Resilience.default
      .with({ clock, backoff: Backoff.none, budget: RetryBudget.none })
      .withListener(() => undefined);
    let calls = 0;
    const call = outer.tryRun(() =>
      inner.run(() => (++calls < 3 ? new Promise(() => undefined) : 'ok')),
    );
    await clock.advance(100);
    const result = await call;
    expect([result.ok, result.value, calls]).toEqual([true, 'ok', 3]);
    expect(result.attempts.map((a) => [a.verdict, (a.error as Error | undefined)?.name])).toEqual([
      ['Transient', 'DeadlineExceededError'],
      ['Transient', 'DeadlineExceededError'],
      ['Ok', undefined],
    ]);
  });
});
