import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { Classifier } from '../classification/classifier.js';
import type { CallEvent } from '../events/call-events.js';
import type { CallContinuation } from './executor.js';
import { PolicyConfigError } from '../errors.js';
import { FakeClock } from '../time/fake-clock.js';
import { Jitter } from '../backoff/jitter.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Verdict } from '../classification/verdict.js';
import { HeldCall } from './held-call.js';

class Pushback extends Error {
  constructor(readonly ms: number) {
    super(`pushback ${ms}`);
  }
}

function setup(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const classifier = Classifier.of((outcome) =>
    !outcome.ok && outcome.error instanceof Pushback
      ? Verdict.throttled(outcome.error.ms)
      : undefined,
  );
  const policy = Resilience.default
    .with({
      clock,
      budget: RetryBudget.none,
      classifier,
      backoff: Backoff.exponential({ jitter: Jitter.none }),
      ...extra,
    })
    .withListener((e) => events.push(e));
  return { clock, events, policy };
}

const delays = (events: CallEvent[]) =>
  events.filter((e) => e.kind === 'retrying').map((e) => e.delay);

describe('per-call attempts (RunOptions.attempts)', () => {
  it('attempts: 1 makes one attempt of a policy allowing three', async () => {
    const { policy } = setup();
    let calls = 0;
    const result = await policy.tryRun(() => Promise.reject(new Error(`fail ${++calls}`)), {
      attempts: 1,
    });
    expect([calls, result.reason, result.attempts.length]).toEqual([1, 'attemptsExhausted', 1]);
  });

  it('can lower the policy attempts, never raise them', async () => {
    const { policy, clock } = setup();
    let calls = 0;
    const call = policy.tryRun(() => Promise.reject(new Error(`fail ${++calls}`)), {
      attempts: 10,
    });
    await clock.runAll();
    expect([(await call).attempts.length, calls]).toEqual([3, 3]);
  });

  it.each([0, 1.5, -1, '2'])('rejects attempts %j naming the field', (attempts) => {
    const { policy } = setup();
    expect(() => policy.run(() => 1, { attempts: attempts as number })).toThrow(
      expect.objectContaining({ name: 'PolicyConfigError', field: 'attempts' }),
    );
  });
});

describe('server pushback and the backoff curve (gRFC A6)', () => {
  it('after a pushback the computed delay starts again from the first retry', async () => {
    const { policy, clock, events } = setup({ attempts: 5 });
    const failures = [new Error('a'), new Error('b'), new Pushback(700), new Error('c')];
    const call = policy.tryRun(() => Promise.reject(failures.shift() ?? new Error('d')));
    await clock.runAll();
    await call;
    // 100, 200 on the curve; 700 as pushed back; then 100 again (not 800, the fourth step).
    expect(delays(events)).toEqual([100, 200, 700, 100]);
  });
});

describe('attempt bounds on the context', () => {
  it('gives each attempt its bound and the time left on the deadline', async () => {
    const { policy, clock } = setup({
      deadline: 1000,
      attemptTimeout: 300,
      backoff: Backoff.constant(100),
    });
    const seen: [number, number][] = [];
    const call = policy.tryRun(async ({ bound, remaining }) => {
      seen.push([bound, remaining]);
      throw new Error('fail');
    });
    await clock.runAll();
    await call;
    expect(seen).toEqual([
      [300, 1000],
      [300, 900],
      [300, 800],
    ]);
  });

  it('is Infinity for both without a deadline or attempt timeout', async () => {
    const { policy } = setup();
    expect(await policy.run(({ bound, remaining }) => [bound, remaining])).toEqual([
      Infinity,
      Infinity,
    ]);
  });
});

describe('carrying on a call (RunOptions.continuing)', () => {
  class Broke extends Error {
    override name = 'Broke';
  }
  const broke = new Broke('body broke');

  it('makes the next attempt a retry of the call: numbered on, after the backoff, with a retrying event', async () => {
    const { clock, events, policy } = setup({ random: () => 0.5 });
    const seen: number[] = [];
    const call = policy.tryRun(({ attempt }) => (seen.push(attempt), 'resumed'), {
      continuing: { attempts: 1, error: broke, deadlineAt: Infinity },
    });
    await clock.advance(99);
    expect(seen).toEqual([]);
    await clock.advance(1);
    const result = await call;
    expect([seen, result.reason, result.value, result.attempts.map((a) => a.attempt)]).toEqual([
      [2],
      'succeeded',
      'resumed',
      [2],
    ]);
    expect(events.map(String)).toEqual([
      '[] Retrying #1 Transient (0ms) +100ms Broke',
      '[] Attempt #2 Ok (0ms)',
      '[] Succeeded #2 (100ms)',
    ]);
  });

  it('spends a budget token, and is refused like any retry when the budget is empty', async () => {
    const budget = RetryBudget.of({ fraction: 0, minimumPerSecond: 0 });
    const { clock, policy } = setup({ budget, backoff: Backoff.none });
    const bucket = policy.bucket()!;
    const before = bucket.level;
    await policy.run(() => 'ok', {
      continuing: { attempts: 1, error: broke, deadlineAt: Infinity },
    });
    expect(bucket.level).toBe(before - 1);
    while (bucket.tryAcquire());
    let calls = 0;
    const refused = policy.tryRun(() => ++calls, {
      continuing: { attempts: 1, error: broke, deadlineAt: Infinity },
    });
    await clock.advance(100);
    const result = await refused;
    expect([
      calls,
      result.reason,
      (result.error as Error).name,
      ((result.error as Error).cause as Error).name,
    ]).toEqual([0, 'budgetExhausted', 'CallRejectedError', 'Broke']);
  });

  it('ends with the error that broke the value when no attempt is left, or the deadline has passed', async () => {
    const { clock, policy } = setup({ backoff: Backoff.none });
    let calls = 0;
    const exhausted = await policy.tryRun(() => ++calls, {
      continuing: { attempts: 3, error: broke, deadlineAt: Infinity },
    });
    expect([calls, exhausted.reason, exhausted.error]).toEqual([0, 'attemptsExhausted', broke]);
    const late = await policy.tryRun(() => ++calls, {
      continuing: { attempts: 1, error: broke, deadlineAt: clock.now() },
    });
    expect([calls, late.reason, late.error]).toEqual([0, 'deadlineExceeded', broke]);
  });

  it('bounds the attempt by what is left of the original deadline', async () => {
    const { clock, policy } = setup({ backoff: Backoff.none, deadline: 1000 });
    const bounds: number[] = [];
    await clock.advance(700);
    await policy.run(({ bound }) => bounds.push(bound), {
      continuing: { attempts: 1, error: broke, deadlineAt: 1000 },
    });
    expect(bounds).toEqual([300]);
  });

  it('is refused by an open breaker', async () => {
    const { clock, policy } = setup({ backoff: Backoff.none, breaker: Breaker.default });
    policy.breaker()!.isolate();
    const refused = policy.tryRun(() => 'never', {
      continuing: { attempts: 1, error: broke, deadlineAt: Infinity },
    });
    await clock.advance(100);
    expect((await refused).reason).toBe('dependencyUnavailable');
  });

  it('rejects a malformed continuation by field', () => {
    const { policy } = setup();
    expect(() =>
      policy.run(() => 1, { continuing: { attempts: 0, error: broke, deadlineAt: Infinity } }),
    ).toThrow(
      new PolicyConfigError(
        'continuing.attempts',
        0,
        'must be an integer >= 1 (the attempts the call already made)',
      ),
    );
    expect(() =>
      policy.run(() => 1, { continuing: { attempts: 1.5, error: broke, deadlineAt: Infinity } }),
    ).toThrow(
      'continuing.attempts: 1.5 is invalid: must be an integer >= 1 (the attempts the call already made)',
    );
    expect(() =>
      policy.run(() => 1, { continuing: { attempts: 1, error: broke, deadlineAt: Number.NaN } }),
    ).toThrow(
      'continuing.deadlineAt: NaN is invalid: must be a clock reading in ms, or Infinity for no deadline',
    );
    expect(() => policy.run(() => 1, { continuing: null as unknown as CallContinuation })).toThrow(
      'continuing: null is invalid: must be { attempts, error, deadlineAt }',
    );
  });

  it('rejects a malformed continuation from tryRun as run throws, before any attempt', async () => {
    const { policy } = setup();
    let ran = 0;
    const result = policy.tryRun(() => ++ran, {
      continuing: { attempts: 2, error: broke, deadlineAt: '5' as unknown as number },
    });
    await expect(result).rejects.toThrow(
      'continuing.deadlineAt: "5" is invalid: must be a clock reading in ms, or Infinity for no deadline',
    );
    expect(ran).toBe(0);
  });
});

describe('holding a call open for its observer (RunOptions.hold, continuing.held)', () => {
  class Broke extends Error {
    override name = 'Broke';
  }
  const broke = new Broke('body broke');

  /** A policy whose observer records call starts and ends beside the events. */
  function observed(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
    const clock = new FakeClock();
    const log: string[] = [];
    const policy = Resilience.default
      .with({ clock, budget: RetryBudget.none, backoff: Backoff.constant(100), ...extra })
      .withListener({
        callStarted: () => (log.push('start'), { id: log.length }),
        event: (event: CallEvent, state: unknown) =>
          log.push(`${String(event)} state=${(state as { id?: number } | undefined)?.id}`),
        callEnded: (state: unknown) => log.push(`end state=${(state as { id: number }).id}`),
      });
    return { clock, log, policy };
  }

  it('holds a success until end(): the terminal event and the call end come then, once', async () => {
    const { clock, log, policy } = observed();
    const held = new HeldCall();
    expect(await policy.run(() => 'body', { hold: held })).toBe('body');
    expect([log, held.open]).toEqual([['start', '[] Attempt #1 Ok (0ms) state=1'], true]);
    await clock.advance(40);
    held.end();
    held.end();
    expect(log.slice(2)).toEqual(['[] Succeeded #1 (0ms) state=1', 'end state=1']);
    expect(held.open).toBe(false);
  });

  it('a run carrying the held call on is observed as that call: no new start, attempts numbered on, one terminal event', async () => {
    const { clock, log, policy } = observed();
    const held = new HeldCall();
    await policy.run(() => 'first part', { hold: held });
    await clock.advance(250);
    const rest = policy.run(() => 'rest', {
      hold: held,
      continuing: { attempts: 1, error: broke, deadlineAt: Infinity, held },
    });
    await clock.advance(100);
    expect(await rest).toBe('rest');
    held.report({ kind: 'streamResumed', attempt: 2, verdict: 'Ok' });
    held.end();
    expect(log).toEqual([
      'start',
      '[] Attempt #1 Ok (0ms) state=1',
      '[] Retrying #1 Transient (0ms) +100ms Broke state=1',
      '[] Attempt #2 Ok (0ms) state=1',
      '[] StreamResumed #2 Ok (0ms) state=1',
      // Its duration counts from the call's start: 250 ms of delivery, then the 100 ms backoff.
      '[] Succeeded #2 (350ms) state=1',
      'end state=1',
    ]);
  });

  it('a carried-on run that fails tells the one terminal event at once, and end() then does nothing', async () => {
    const { log, policy } = observed({ attempts: 2 });
    const held = new HeldCall();
    await policy.run(() => 'first part', { hold: held });
    const exhausted = await policy.tryRun(() => 'never', {
      hold: held,
      continuing: { attempts: 2, error: broke, deadlineAt: Infinity, held },
    });
    held.end();
    expect([exhausted.reason, exhausted.error]).toEqual(['attemptsExhausted', broke]);
    expect(log).toEqual([
      'start',
      '[] Attempt #1 Ok (0ms) state=1',
      '[] Failed #2 Transient (0ms) attemptsExhausted Broke state=1',
      'end state=1',
    ]);
  });

  it('end(error) ends a held success as failed, permanent, with that error and the time until now', async () => {
    const { clock, log, policy } = observed();
    const held = new HeldCall();
    await policy.run(() => 'first part', { hold: held });
    await clock.advance(70);
    held.end(broke);
    expect(log.slice(2)).toEqual([
      '[] Failed #1 Permanent (70ms) permanent Broke state=1',
      'end state=1',
    ]);
  });

  it('a call that does not succeed is told as usual and holds nothing', async () => {
    const { log, policy } = observed({ attempts: 1 });
    const held = new HeldCall();
    await policy.tryRun(() => Promise.reject(broke), { hold: held });
    expect([held.open, log.at(-1)]).toEqual([false, 'end state=1']);
  });

  it('rejects a hold or held that is not a HeldCall, by field', () => {
    const { policy } = observed();
    expect(() => policy.run(() => 1, { hold: {} as HeldCall })).toThrow(
      'hold: {} is invalid: must be a HeldCall (new HeldCall())',
    );
    expect(() =>
      policy.run(() => 1, {
        continuing: { attempts: 1, error: broke, deadlineAt: Infinity, held: {} as HeldCall },
      }),
    ).toThrow(
      'continuing.held: {} is invalid: must be the HeldCall the carried call was run with (RunOptions.hold)',
    );
  });
});
