import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { CallRejectedError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { FakeClock } from '../time/fake-clock.js';
import { sleep } from '../time/sleep.js';
import { Drain } from './drain.js';
import type { CallEvent } from '../events/call-events.js';

const down = () => Promise.reject(new Error('down'));

function setup() {
  const clock = new FakeClock();
  const drain = new Drain();
  const events: string[] = [];
  const policy = Resilience.default.with({
    name: 'p',
    clock,
    drain,
    attempts: 3,
    backoff: Backoff.constant(30_000),
    budget: RetryBudget.of({ minimumPerSecond: 0 }),
    onEvent: (e: CallEvent) => events.push(`${e.kind}${e.reason ? `:${e.reason}` : ''}`),
  });
  return { clock, drain, events, policy };
}

describe('Drain', () => {
  it('a call sleeping in backoff settles at once with the failure it had: one attempt, reason draining, the token back', async () => {
    const { clock, drain, events, policy } = setup();
    const call = policy.tryRun(down);
    await clock.advance(0);
    expect(clock.pending).toBe(1);
    expect(policy.bucket()!.level).toBe(9);
    drain.start();
    const result = await call;
    expect([result.reason, result.attempts.length, (result.error as Error).message]).toEqual([
      'draining',
      1,
      'down',
    ]);
    expect(events).toEqual(['attempt', 'retrying', 'draining', 'failed:draining']);
    expect(clock.pending).toBe(0);
    expect(policy.bucket()!.level).toBe(10);
    expect(drain.waiters).toBe(0);
  });

  it('after the drain, a new call makes its first attempt and no retry; a success is untouched', async () => {
    const { drain, events, policy } = setup();
    drain.start();
    const failed = await policy.tryRun(down);
    expect([failed.reason, failed.attempts.length]).toEqual(['draining', 1]);
    expect(await policy.run(() => 'ok')).toBe('ok');
    expect(events).toEqual([
      'attempt',
      'draining',
      'failed:draining',
      'attempt',
      'succeeded:succeeded',
    ]);
  });

  it('a guarded pause ends at once: with the failure after an attempt, with the refusal before any', async () => {
    const { clock, drain, policy } = setup();
    const guarded = policy.with({
      breaker: Breaker.with({ consecutiveFailures: 1, breakDuration: 60_000, jitter: 'none' }),
    });
    // The first attempt trips the breaker: the retry is refused, the call waits in the guarded pause.
    const afterFailure = guarded.tryRun(down);
    await clock.advance(0);
    const beforeAny = guarded.tryRun(() => 'never');
    await clock.advance(0);
    expect(clock.pending).toBe(2);
    drain.start();
    const [failure, refusal] = await Promise.all([afterFailure, beforeAny]);
    expect([failure.reason, failure.attempts.length, (failure.error as Error).message]).toEqual([
      'draining',
      1,
      'down',
    ]);
    expect([
      refusal.reason,
      refusal.attempts.length,
      (refusal.error as CallRejectedError).reason,
    ]).toEqual(['dependencyUnavailable', 0, 'DependencyUnavailable']);
    expect(clock.now()).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('sleep: false when the time passed, true at once when drained (before or during), no waiter left behind', async () => {
    const clock = new FakeClock();
    const drain = new Drain();
    const timed = sleep(clock, 100, undefined, drain);
    await clock.advance(100);
    expect(await timed).toBe(false);
    expect(drain.waiters).toBe(0);
    const cut = sleep(clock, 100, undefined, drain);
    expect(drain.waiters).toBe(1);
    drain.start();
    expect(await cut).toBe(true);
    expect(await sleep(clock, 100, undefined, drain)).toBe(true);
    expect(clock.pending).toBe(0);
  });
});
