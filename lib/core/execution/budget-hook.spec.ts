import { Backoff } from '../backoff/backoff.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import { RetryBudget } from '../budget/retry-budget.js';
import type { Verdict } from '../classification/verdict.js';
import { AttemptTimeoutError, RateLimitedError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';

/** A budget state that funds every retry and writes down what the executor tells it. */
class Recording implements RetryBudgetState {
  readonly told: string[] = [];
  readonly capacity = Infinity;
  readonly level = Infinity;
  readonly utilization = 0;
  readonly canFundRetry = true;
  constructor(readonly timesRetries: boolean) {}
  recordCall(): void {}
  deposit(): void {
    this.told.push('deposit');
  }
  recordAttempt(attempt: number, verdict: Verdict, duration: number, error: unknown): void {
    this.told.push(
      `#${attempt} ${verdict.kind} ${duration}ms ${error instanceof Error ? error.name : String(error)}`,
    );
  }
  tryAcquire(): boolean {
    return true;
  }
  refund(): void {}
  retryAfter(): number | undefined {
    return 0;
  }
}

class Flaky extends Error {
  override name = 'Flaky';
}

/** Work whose attempt n settles after `ms[n-1]` fake ms, failing until the last. */
function settlesAfter(
  clock: FakeClock,
  ms: number[],
  failure: (attempt: number) => Error = () => new Flaky('down'),
) {
  return ({ attempt }: { attempt: number }) =>
    new Promise<string>((resolve, reject) => {
      clock.setTimer(ms[attempt - 1]!, () =>
        attempt < ms.length ? reject(failure(attempt)) : resolve(`ok #${attempt}`),
      );
    });
}

async function drive(clock: FakeClock, pending: Promise<unknown>): Promise<void> {
  let done = false;
  void pending.finally(() => (done = true)).catch(() => undefined);
  while (!done) await clock.advance(1);
}

describe('the retry budget is told every attempt the executor records', () => {
  it('times retries for a budget that reads their durations, even with nothing else timed', async () => {
    const clock = new FakeClock();
    const state = new Recording(true);
    const policy = Resilience.default.with({
      clock,
      backoff: Backoff.constant(5),
      budget: RetryBudget.using(state),
    });
    const call = policy.run(settlesAfter(clock, [10, 30, 40]));
    await drive(clock, call);
    await expect(call).resolves.toBe('ok #3');
    // The first attempt was not timed (nothing asked for it); both retries were, from their own start.
    expect(state.told).toEqual([
      '#1 Transient 0ms Flaky',
      '#2 Transient 30ms Flaky',
      '#3 Ok 40ms undefined',
    ]);
  });

  it('leaves retries untimed for a budget that reads no durations', async () => {
    const clock = new FakeClock();
    const state = new Recording(false);
    const policy = Resilience.default.with({
      clock,
      backoff: Backoff.constant(5),
      budget: RetryBudget.using(state),
    });
    const call = policy.run(settlesAfter(clock, [10, 30]));
    await drive(clock, call);
    await call;
    expect(state.told).toEqual(['#1 Transient 0ms Flaky', '#2 Ok 0ms undefined']);
  });

  it('tells an attempt timeout its error, and a Limited outcome as Limited', async () => {
    const clock = new FakeClock();
    const state = new Recording(true);
    const policy = Resilience.default.with({
      clock,
      attemptTimeout: 25,
      backoff: Backoff.constant(5),
      budget: RetryBudget.using(state),
    });
    const call = policy.run(
      settlesAfter(clock, [10, 50, 20], (n) =>
        n === 1 ? new RateLimitedError('self') : new Flaky('x'),
      ),
    );
    await drive(clock, call);
    await expect(call).rejects.toBeInstanceOf(RateLimitedError);
    expect(state.told).toEqual(['#1 Limited 0ms RateLimitedError']);

    const second = new Recording(true);
    const timed = policy.with({ budget: RetryBudget.using(second) });
    const call2 = timed.run(settlesAfter(clock, [10, 50, 20]));
    await drive(clock, call2);
    await expect(call2).resolves.toBe('ok #3');
    expect(second.told).toEqual([
      '#1 Transient 0ms Flaky',
      `#2 Transient 25ms ${new AttemptTimeoutError(25).name}`,
      '#3 Ok 20ms undefined',
    ]);
  });

  it('times the first attempt too when the policy reports, and a first attempt that simply succeeds deposits', async () => {
    const clock = new FakeClock();
    const state = new Recording(false);
    const policy = Resilience.default
      .with({ clock, backoff: Backoff.constant(5), budget: RetryBudget.using(state) })
      .withListener(() => undefined);
    const call = policy.run(settlesAfter(clock, [10, 30]));
    await drive(clock, call);
    await call;
    expect(state.told).toEqual(['#1 Transient 10ms Flaky', '#2 Ok 30ms undefined']);
  });

  it('a first attempt that simply succeeds is told like any other (one path), untimed', async () => {
    const state = new Recording(true);
    await expect(
      Resilience.default.with({ budget: RetryBudget.using(state) }).run(async () => 'fine'),
    ).resolves.toBe('fine');
    expect(state.told).toEqual(['#1 Ok 0ms undefined']);
  });
});
