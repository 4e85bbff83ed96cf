import { getEventListeners } from 'node:events';
import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Classifier } from '../classification/classifier.js';
import { Verdict } from '../classification/verdict.js';
import { CallRejectedError, DeadlineExceededError, PolicyConfigError } from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import { Limit } from '../limits/limit-value.js';
import { Resilience } from '../policy/policy.js';
import type { PolicyOptions } from '../policy/policy-options.js';
import { Drain } from '../signals/drain.js';
import { FakeClock } from '../time/fake-clock.js';
import { FALLBACK_REASONS, Fallback, type FallbackStop } from './fallback.js';

// When the policy's fallback runs (DESIGN §3.8) and what the call's one terminal event says of it
// (DESIGN §3.12), stop reason by stop reason.

class Down extends Error {
  override name = 'Down';
}
class NotFound extends Error {
  override name = 'NotFound';
}

/** Down is Transient, NotFound Permanent, Final a Transient failure marked final (not safe to repeat). */
const classifier = Classifier.of((outcome) => {
  if (outcome.ok) return undefined;
  const name = (outcome.error as Error).name;
  if (name === 'NotFound') return Verdict.permanent;
  if (name === 'Final') return Verdict.final(Verdict.transient);
  return undefined;
});

function setup(options: PolicyOptions = {}, fallback?: Fallback) {
  const clock = new FakeClock();
  const stops: FallbackStop[] = [];
  const events: CallEvent[] = [];
  const answer = (stop: FallbackStop) => {
    stops.push(stop);
    return 'stand-in';
  };
  const policy = Resilience.default
    .with({
      name: 'quotes',
      clock,
      random: () => 0.5,
      backoff: Backoff.none,
      budget: RetryBudget.none,
      attempts: 3,
      classifier,
      fallback: fallback ?? answer,
      ...options,
    })
    .withListener((event) => events.push(event));
  const terminal = () =>
    events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.error, e.fallback]);
  return { clock, stops, events, policy, terminal, answer };
}

/** The stop a fallback was told, as [reason, error name, attempts]. */
const told = (stops: FallbackStop[]) =>
  stops.map((s) => [s.reason, (s.error as Error | undefined)?.name, s.attempts]);

describe('the fallback answers a call that stopped without a value of its own', () => {
  it('attempts exhausted on Transient failures: after the last attempt, told the last error', async () => {
    const { policy, stops, terminal } = setup();
    let attempts = 0;
    await expect(
      policy.run(() => {
        attempts++;
        throw new Down('down');
      }),
    ).resolves.toBe('stand-in');
    expect(attempts).toBe(3);
    expect(told(stops)).toEqual([['attemptsExhausted', 'Down', 3]]);
    expect(terminal()).toEqual([['failed', 'attemptsExhausted', 'Down', 'served']]);
  });

  it('a retryable failure of a request not safe to repeat (notRepeatable)', async () => {
    const { policy, stops, terminal } = setup();
    const final = Object.assign(new Error('reset'), { name: 'Final' });
    await expect(policy.run(() => Promise.reject(final))).resolves.toBe('stand-in');
    expect(told(stops)).toEqual([['notRepeatable', 'Final', 1]]);
    expect(terminal()).toEqual([['failed', 'notRepeatable', 'Final', 'served']]);
  });

  it('the deadline: told the DeadlineExceededError, at the deadline', async () => {
    const { clock, policy, stops, terminal } = setup({ deadline: 250 });
    const call = policy.run(() => new Promise<string>(() => {}));
    await clock.advance(250);
    await expect(call).resolves.toBe('stand-in');
    expect(stops[0]!.error).toBeInstanceOf(DeadlineExceededError);
    expect(told(stops)).toEqual([['deadlineExceeded', 'DeadlineExceededError', 1]]);
    expect(terminal()).toEqual([['failed', 'deadlineExceeded', 'DeadlineExceededError', 'served']]);
  });

  it('a refusal by the retry budget: the eleventh retry is refused, the fallback answers', async () => {
    // Ten tokens and no refill: ten retries, then the next retry is refused.
    const { clock, policy, stops, terminal } = setup({
      attempts: 12,
      budget: RetryBudget.tokenBucket({ fraction: 0, minimumPerSecond: 0 }),
    });
    let attempts = 0;
    const call = policy.run(() => {
      attempts++;
      throw new Down('down');
    });
    await clock.advance(100); // the guarded pause before a refusal
    await expect(call).resolves.toBe('stand-in');
    expect(attempts).toBe(11);
    expect((stops[0]!.error as CallRejectedError).reason).toBe('BudgetExhausted');
    expect(told(stops)).toEqual([['budgetExhausted', 'CallRejectedError', 11]]);
    expect(terminal()).toEqual([['rejected', 'budgetExhausted', 'CallRejectedError', 'served']]);
  });

  it('a refusal by an open breaker: the work never starts', async () => {
    const { clock, policy, stops, terminal } = setup({
      attempts: 1,
      breaker: Breaker.with({ consecutiveFailures: 1, breakDuration: 10_000, jitter: 'none' }),
    });
    await policy.run(() => Promise.reject(new Down('down')));
    let started = 0;
    const call = policy.run(() => ++started);
    await clock.advance(100);
    await expect(call).resolves.toBe('stand-in');
    expect(started).toBe(0);
    expect(told(stops)).toEqual([
      ['attemptsExhausted', 'Down', 1],
      ['dependencyUnavailable', 'CallRejectedError', 0],
    ]);
    expect(terminal()[1]).toEqual([
      'rejected',
      'dependencyUnavailable',
      'CallRejectedError',
      'served',
    ]);
  });

  it('a refusal by the concurrency limit and by a caller quota (stop reason limited)', async () => {
    const { clock, policy, stops, terminal } = setup({ limit: Limit.concurrency(1) });
    let release!: () => void;
    const held = policy.run(() => new Promise<string>((resolve) => (release = () => resolve('a'))));
    const limited = policy.run(() => 'unused');
    await clock.advance(100);
    await expect(limited).resolves.toBe('stand-in');
    release();
    await expect(held).resolves.toBe('a');
    const quota = { refusal: () => 5_000, spend: () => {} };
    let started = 0;
    const byQuota = policy.run(() => ++started, { quota });
    await clock.advance(100);
    await expect(byQuota).resolves.toBe('stand-in');
    expect(started).toBe(0);
    expect(stops.map((s) => [s.reason, (s.error as CallRejectedError).reason, s.attempts])).toEqual(
      [
        ['limited', 'Limited', 0],
        ['limited', 'QuotaExhausted', 0],
      ],
    );
    expect(terminal()).toEqual([
      ['rejected', 'limited', 'CallRejectedError', 'served'],
      ['succeeded', 'succeeded', undefined, undefined],
      ['rejected', 'limited', 'CallRejectedError', 'served'],
    ]);
  });

  it('a value a classifier rejected (a returned 503) is handed over as stop.value, with no error', async () => {
    const { policy, stops } = setup({
      attempts: 2,
      classifier: Classifier.of((outcome) =>
        outcome.ok && outcome.value === 503 ? Verdict.transient : undefined,
      ),
    });
    await expect(policy.run(() => 503)).resolves.toBe('stand-in');
    expect(stops.map((s) => [s.reason, s.error, s.value, s.attempts])).toEqual([
      ['attemptsExhausted', undefined, 503, 2],
    ]);
  });
});

describe('the fallback does not answer', () => {
  it('a Permanent answer (a 404 stays a 404), unless on lists permanent', async () => {
    const notFound = new NotFound('no such quote');
    const plain = setup();
    await expect(plain.policy.run(() => Promise.reject(notFound))).rejects.toBe(notFound);
    expect(plain.stops).toEqual([]);
    expect(plain.terminal()).toEqual([['failed', 'permanent', 'NotFound', undefined]]);

    const listed = setup({}, undefined);
    const withPermanent = listed.policy.with({
      fallback: Fallback.to(listed.answer, { on: [...FALLBACK_REASONS, 'permanent'] }),
    });
    await expect(withPermanent.run(() => Promise.reject(notFound))).resolves.toBe('stand-in');
    expect(told(listed.stops)).toEqual([['permanent', 'NotFound', 1]]);
  });

  it("the caller's cancellation and a drain (each while waiting out a backoff)", async () => {
    const { clock, policy, stops, terminal } = setup({ backoff: Backoff.constant(30_000) });
    const controller = new AbortController();
    const left = new Error('user left');
    const cancelled = policy.tryRun(() => Promise.reject(new Down('down')), {
      signal: controller.signal,
    });
    await clock.advance(0);
    controller.abort(left);
    expect([(await cancelled).error, (await cancelled).fallback]).toEqual([left, undefined]);

    const drain = new Drain();
    const draining = policy.with({ drain }).tryRun(() => Promise.reject(new Down('down')));
    await clock.advance(0);
    drain.start();
    expect(((await draining).error as Error).name).toBe('Down');
    expect(stops).toEqual([]);
    expect(terminal().map(([kind, reason, , fallback]) => [kind, reason, fallback])).toEqual([
      ['failed', 'cancelled', undefined],
      ['failed', 'draining', undefined],
    ]);
  });
});

describe('a fallback that throws', () => {
  it("rejects with its own error, the call's error as its cause; the terminal event says failed and names the fallback's error", async () => {
    const original = new Down('down');
    const own = Object.assign(new Error('no cache either'), { name: 'CacheMissError' });
    const { policy, terminal } = setup(
      {},
      Fallback.to(() => Promise.reject(own)),
    );
    const result = await policy.tryRun(() => Promise.reject(original));
    expect([result.ok, result.error, result.reason, result.fallback]).toEqual([
      false,
      own,
      'attemptsExhausted',
      'failed',
    ]);
    expect(own.cause).toBe(original);
    expect(terminal()).toEqual([['failed', 'attemptsExhausted', 'CacheMissError', 'failed']]);
  });

  it('keeps a cause of its own', async () => {
    const mine = new Error('mine');
    const own = new Error('no cache', { cause: mine });
    const { policy } = setup(
      { attempts: 1 },
      Fallback.to(() => Promise.reject(own)),
    );
    await expect(policy.run(() => Promise.reject(new Down('down')))).rejects.toBe(own);
    expect(own.cause).toBe(mine);
  });
});

describe('the call’s deadline bounds its fallback', () => {
  /** A fallback that waits on `stop.signal` only: it never settles unless aborted. */
  const hanging = (seen: AbortSignal[]) => (stop: FallbackStop) => {
    seen.push(stop.signal);
    return new Promise<string>(() => {});
  };

  it('attempts exhausted with time left: a fallback still pending at the deadline ends the call then, DeadlineExceededError with the call’s error as cause', async () => {
    const seen: AbortSignal[] = [];
    const { clock, policy, terminal } = setup(
      { deadline: 1000, attempts: 1 },
      Fallback.to(hanging(seen)),
    );
    const outcome = policy.run(() => Promise.reject(new Down('down'))).catch((e: unknown) => e);
    await clock.advance(999);
    expect(seen.map((signal) => signal.aborted)).toEqual([false]);
    await clock.advance(1);
    const error = (await outcome) as DeadlineExceededError;
    expect([error.name, error.deadline, (error.cause as Error).name]).toEqual([
      'DeadlineExceededError',
      1000,
      'Down',
    ]);
    expect(clock.now()).toBe(1000);
    expect(seen[0]!.aborted).toBe(true);
    expect(seen[0]!.reason).toBe(error);
    expect(terminal()).toEqual([
      ['failed', 'attemptsExhausted', 'DeadlineExceededError', 'failed'],
    ]);
  });

  it('stopped at the deadline: no time left, so the call rejects with its own DeadlineExceededError at once; an answer at hand is still served', async () => {
    const seen: AbortSignal[] = [];
    const { clock, policy, terminal } = setup({ deadline: 250 }, Fallback.to(hanging(seen)));
    const outcome = policy.run(() => new Promise(() => {})).catch((e: unknown) => e);
    await clock.advance(250);
    const error = (await outcome) as DeadlineExceededError;
    expect([error.name, error.deadline, clock.now()]).toEqual(['DeadlineExceededError', 250, 250]);
    expect(seen[0]!.aborted).toBe(true);
    expect(terminal()).toEqual([['failed', 'deadlineExceeded', 'DeadlineExceededError', 'failed']]);

    const atHand = setup(
      { deadline: 250 },
      Fallback.to(async () => 'cached'),
    );
    const served = atHand.policy.run(() => new Promise(() => {}));
    await atHand.clock.advance(250);
    await expect(served).resolves.toBe('cached');
  });

  it('the caller’s abort while the fallback runs rejects with its reason and aborts stop.signal', async () => {
    const seen: AbortSignal[] = [];
    const { clock, policy, terminal } = setup({ attempts: 1 }, Fallback.to(hanging(seen)));
    const caller = new AbortController();
    const outcome = policy
      .run(() => Promise.reject(new Down('down')), { signal: caller.signal })
      .catch((e: unknown) => e);
    await clock.advance(5000);
    const gone = new Error('client went away');
    caller.abort(gone);
    await expect(outcome).resolves.toBe(gone);
    expect(seen[0]!.reason).toBe(gone);
    expect(terminal()).toEqual([['failed', 'attemptsExhausted', 'Error', 'failed']]);
  });

  it('a fallback that answers in time is served; its deadline timer is cleared and the caller’s signal left as it was', async () => {
    const caller = new AbortController();
    const { clock, policy, terminal } = setup(
      { deadline: 1000, attempts: 1 },
      Fallback.to(
        () => new Promise<string>((resolve) => clock.setTimer(400, () => resolve('cached'))),
      ),
    );
    const outcome = policy.run(() => Promise.reject(new Down('down')), { signal: caller.signal });
    await clock.advance(400);
    await expect(outcome).resolves.toBe('cached');
    expect([clock.pending, getEventListeners(caller.signal, 'abort').length]).toEqual([0, 0]);
    expect(terminal()).toEqual([['failed', 'attemptsExhausted', 'Down', 'served']]);
  });

  it('a thenable whose then throws rejects the call with that error, its deadline timer cleared and no listener left', async () => {
    const caller = new AbortController();
    const broken = new Error('then threw');
    const { clock, policy } = setup(
      { deadline: 1000, attempts: 1 },
      Fallback.to(() => ({
        then(): never {
          throw broken;
        },
      })),
    );
    const outcome = policy
      .run(() => Promise.reject(new Down('down')), { signal: caller.signal })
      .catch((e: unknown) => e);
    await expect(outcome).resolves.toBe(broken);
    expect([clock.pending, getEventListeners(caller.signal, 'abort').length]).toEqual([0, 0]);
  });

  it('no deadline and no signal: the fallback is waited for as before', async () => {
    const { clock, policy } = setup(
      { attempts: 1 },
      Fallback.to(
        () => new Promise<string>((resolve) => clock.setTimer(60_000, () => resolve('late'))),
      ),
    );
    const outcome = policy.run(() => Promise.reject(new Down('down')));
    await clock.advance(60_000);
    await expect(outcome).resolves.toBe('late');
  });
});

describe('Fallback.to checks what it is given', () => {
  it('names the field, the value and the rule', () => {
    const problem = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        const e = error as PolicyConfigError;
        return [e instanceof PolicyConfigError, e.field, e.message];
      }
      return undefined;
    };
    expect(problem(() => Fallback.to('cached' as never))).toEqual([
      true,
      'fallback',
      expect.stringContaining('must be a function (stop) => value'),
    ]);
    expect(problem(() => Fallback.to(() => 1, { on: [] }))).toEqual([
      true,
      'fallback.on',
      expect.stringContaining('must be a non-empty list of stop reasons'),
    ]);
    expect(problem(() => Fallback.to(() => 1, { on: ['timeout' as never] }))).toEqual([
      true,
      'fallback.on',
      expect.stringContaining('must be a non-empty list of stop reasons'),
    ]);
    expect(problem(() => Fallback.to(() => 1, { bogus: 1 } as never))).toEqual([
      true,
      'fallback.bogus',
      'fallback.bogus: 1 is invalid: is not a known fallback option (on)',
    ]);
    expect(problem(() => Fallback.to(() => 1, { on: null as never }))).toEqual([
      true,
      'fallback.on',
      expect.stringContaining('must be a non-empty list of stop reasons'),
    ]);
    expect(problem(() => Fallback.to(() => 1, [] as never))).toEqual([
      true,
      'fallback',
      expect.stringContaining('must be a plain object'),
    ]);
    expect(problem(() => Resilience.default.with({ fallback: 5 as never }))).toEqual([
      true,
      'fallback',
      expect.stringContaining('must be a function'),
    ]);
  });
});
