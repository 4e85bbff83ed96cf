import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { Classifier } from '../classification/classifier.js';
import { Verdict } from '../classification/verdict.js';
import { DeadlineExceededError } from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';

/**
 * The executor's success fast paths (issue 15): what they skip must not show. Each case is something
 * a caller observes — the promise returned, the bucket level, the breaker's reading, the events and
 * their durations — on the paths that now bypass the loop for attempt 1.
 */

class Flaky extends Error {
  override name = 'Flaky';
}

describe('every feature off', () => {
  const off = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });

  it("returns the work's own promise: no frame of ours", () => {
    const promise = Promise.resolve(7);
    expect(off.run(() => promise)).toBe(promise);
  });

  it('turns a synchronous throw into a rejection and a plain value into a resolution', async () => {
    const boom = new Flaky('sync');
    const rejected = off.run(() => {
      throw boom;
    });
    expect(rejected).toBeInstanceOf(Promise);
    await expect(rejected).rejects.toBe(boom);
    await expect(off.run(() => 'plain')).resolves.toBe('plain');
  });

  it('gives the attempt a context whose signal never aborts and whose bounds are infinite', async () => {
    const seen = await off.run((ctx) => ({
      attempt: ctx.attempt,
      bound: ctx.bound,
      remaining: ctx.remaining,
      aborted: ctx.signal.aborted,
    }));
    expect(seen).toEqual({ attempt: 1, bound: Infinity, remaining: Infinity, aborted: false });
  });
});

describe('retry + budget, nothing timed', () => {
  it('deposits the fraction once per success, and retries a failure from the loop', async () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({
      clock,
      backoff: Backoff.none,
      budget: RetryBudget.of({ fraction: 0.25, minimumPerSecond: 0 }),
    });
    const bucket = policy.bucket()!;
    bucket.tryAcquire();
    bucket.tryAcquire();
    expect(bucket.level).toBe(8);
    await expect(policy.run(async () => 'ok')).resolves.toBe('ok');
    expect(bucket.level).toBe(8.25);
    let calls = 0;
    await expect(
      policy.run(async () => (++calls === 1 ? Promise.reject(new Flaky('once')) : 'second')),
    ).resolves.toBe('second');
    // One retry spent one token; the successful second attempt deposited 0.25.
    expect({ calls, level: bucket.level }).toEqual({ calls: 2, level: 7.5 });
  });

  it('rejects with the last error once the attempts are spent', async () => {
    const policy = Resilience.default.with({
      clock: new FakeClock(),
      backoff: Backoff.none,
      attempts: 2,
    });
    const seen: number[] = [];
    const error = new Flaky('always');
    await expect(
      policy.run(({ attempt }) => (seen.push(attempt), Promise.reject(error))),
    ).rejects.toBe(error);
    expect(seen).toEqual([1, 2]);
  });
});

describe('timed and bounded first attempts', () => {
  function recorded(extra: Parameters<typeof Resilience.default.with>[0]) {
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const policy = Resilience.default
      .with({ name: 'p', clock, backoff: Backoff.constant(10), budget: RetryBudget.none, ...extra })
      .withListener((e) => events.push(e));
    const summary = () => events.map((e) => `${e.kind}#${e.attempt}:${e.duration}`);
    return { clock, policy, summary };
  }
  const after = (clock: FakeClock, ms: number, outcome: () => unknown) =>
    new Promise((resolve, reject) => {
      clock.setTimer(ms, () => {
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      });
    });

  it('reports a success with the attempt and call durations of the same reading', async () => {
    const { clock, policy, summary } = recorded({});
    const call = policy.run(() => after(clock, 40, () => 'v'));
    await clock.advance(40);
    await expect(call).resolves.toBe('v');
    expect(summary()).toEqual(['attempt#1:40', 'succeeded#1:40']);
  });

  it('hands a failed first attempt to the loop with its start: durations count from the call', async () => {
    const { clock, policy, summary } = recorded({ deadline: 1000 });
    let n = 0;
    const call = policy.run(() =>
      after(clock, 30, () => {
        if (++n === 1) throw new Flaky('first');
        return 'second';
      }),
    );
    await clock.advance(30 + 10 + 30);
    await expect(call).resolves.toBe('second');
    expect(summary()).toEqual(['attempt#1:30', 'retrying#1:30', 'attempt#2:30', 'succeeded#2:70']);
  });

  it('ends the call at the deadline counted from its start, aborting the attempt', async () => {
    const { clock, policy, summary } = recorded({ deadline: 100 });
    let signal: AbortSignal | undefined;
    const call = policy.run((ctx) => {
      signal = ctx.signal;
      return new Promise(() => undefined);
    });
    const settled = call.catch((error: unknown) => error);
    await clock.advance(100);
    expect(await settled).toBeInstanceOf(DeadlineExceededError);
    expect(signal!.reason).toBeInstanceOf(DeadlineExceededError);
    expect(summary()).toEqual(['attempt#1:100', 'failed#1:100']);
    expect(clock.pending).toBe(0);
  });

  it('feeds the closed breaker the measured duration of a success', async () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      breaker: Breaker.default,
    });
    for (let i = 0; i < 20; i++) {
      const call = policy.run(() => after(clock, 25, () => i));
      await clock.advance(25);
      await call;
    }
    expect(policy.breaker()!.snapshot().tripWindowCalls).toBe(20);
    // The baseline leaves out the trip window (30 s): the successes count once they are older.
    await clock.advance(45_000);
    expect(policy.breaker()!.snapshot()).toMatchObject({
      latencyBaselineWarm: true,
      latencyMedian: 25,
    });
  });

  it('classifies a value by the rules once, and retries one they call Transient', async () => {
    const judged: unknown[] = [];
    const classifier = Classifier.of((outcome) => {
      if (!outcome.ok) return undefined;
      judged.push(outcome.value);
      return outcome.value === 'busy' ? Verdict.transient : undefined;
    });
    const { clock, policy, summary } = recorded({
      deadline: 1000,
      breaker: Breaker.default,
      classifier,
    });
    let n = 0;
    const call = policy.run(() => after(clock, 5, () => (++n === 1 ? 'busy' : 'done')));
    await clock.advance(5 + 10 + 5);
    await expect(call).resolves.toBe('done');
    expect(judged).toEqual(['busy', 'done']);
    expect(summary()).toEqual(['attempt#1:5', 'retrying#1:5', 'attempt#2:5', 'succeeded#2:20']);
  });

  it('ends the call with the error of a throwing rule, asked once', async () => {
    const bug = new Error('rule bug');
    let asked = 0;
    const classifier = Classifier.of(() => {
      asked++;
      throw bug;
    });
    const { policy, summary } = recorded({ breaker: Breaker.default, classifier });
    await expect(policy.run(async () => 'v')).rejects.toBe(bug);
    expect({ asked, events: summary() }).toEqual({
      asked: 1,
      events: ['attempt#1:0', 'failed#1:0'],
    });
  });

  it("links the caller's signal without setting a timer when nothing bounds the attempt", async () => {
    const { clock, policy, summary } = recorded({ breaker: Breaker.default });
    const caller = new AbortController();
    const reason = new Error('caller left');
    const call = policy.run(
      (ctx) =>
        new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        ),
      { signal: caller.signal },
    );
    expect(clock.pending).toBe(0);
    caller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(summary()).toEqual(['attempt#1:0', 'failed#1:0']);
  });
});
