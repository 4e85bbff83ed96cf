import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Classifier } from '../classification/classifier.js';
import { Verdict } from '../classification/verdict.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import type { AttemptContext } from './attempt-context.js';
import type { CallEvent } from '../events/call-events.js';

// Issue 9 item 6: defects found by porting cockatiel's, Polly's and resilience4j's own test suites.

class Flaky extends Error {
  override name = 'Flaky';
}

describe('no attempt starts after the caller aborted, with a zero delay between attempts', () => {
  function setup(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
    const clock = new FakeClock();
    const controller = new AbortController();
    const events: CallEvent[] = [];
    const bucket = RetryBudget.of({ fraction: 0.1, minimumPerSecond: 3 });
    const policy = Resilience.default.with({
      name: 'p',
      clock,
      backoff: Backoff.none,
      budget: bucket,
      attempts: 3,
      ...extra,
    });
    let attempts = 0;
    const work = () => {
      attempts++;
      return Promise.reject(new Flaky(`fail ${attempts}`));
    };
    return { clock, controller, events, policy, work, attempts: () => attempts };
  }

  it('a listener aborting on the retrying event: one attempt, cancelled, the retry token returned', async () => {
    const { controller, events, policy, work, attempts } = setup();
    const listened = policy.withListener((event) => {
      events.push(event);
      if (event.kind === 'retrying') controller.abort(new Error('caller gave up'));
    });
    const result = await listened.tryRun(work, { signal: controller.signal });
    expect(attempts()).toBe(1);
    expect(result.reason).toBe('cancelled');
    expect((result.error as Error).message).toBe('caller gave up');
    expect(events.map((e) => e.kind)).toEqual(['attempt', 'retrying', 'failed']);
    expect(events[2]!.attempt).toBe(1);
    expect(listened.bucket()!.level).toBe(listened.bucket()!.capacity);
  });

  it('a classifier rule aborting while it classifies: one attempt, cancelled', async () => {
    const { controller, policy, work, attempts } = setup();
    const classifier = Classifier.of((outcome) => {
      controller.abort(new Error('rule aborted'));
      return !outcome.ok && outcome.error instanceof Flaky ? Verdict.transient : undefined;
    });
    const result = await policy.with({ classifier }).tryRun(work, { signal: controller.signal });
    expect(attempts()).toBe(1);
    expect(result.reason).toBe('cancelled');
    expect((result.error as Error).message).toBe('rule aborted');
  });

  it('a custom backoff aborting and returning 0: one attempt, cancelled; run rejects with the reason', async () => {
    const { controller, policy, work, attempts } = setup();
    const backoff = Backoff.custom(() => {
      controller.abort(new Error('backoff aborted'));
      return 0;
    });
    await expect(policy.with({ backoff }).run(work, { signal: controller.signal })).rejects.toThrow(
      'backoff aborted',
    );
    expect(attempts()).toBe(1);
  });
});

describe("an attempt's signal is not aborted when the attempt returns", () => {
  it('stays usable after the call resolved, also after its attempt timeout and deadline would have passed', async () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({ clock, attemptTimeout: 1_000, deadline: 5_000 });
    let kept: AbortSignal | undefined;
    const body = await policy.run((context: AttemptContext) => {
      kept = context.signal;
      return Promise.resolve('body');
    });
    await clock.advance(10_000);
    expect([body, kept!.aborted]).toEqual(['body', false]);
  });
});
