import { Backoff } from '../backoff/backoff.js';
import { Classifier } from '../classification/classifier.js';
import type { CallEvent } from './events.js';
import { FakeClock } from '../time/fake-clock.js';
import { Jitter } from '../backoff/jitter.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Verdict } from '../classification/verdict.js';

class Pushback extends Error {
  constructor(readonly ms: number) {
    super(`pushback ${ms}`);
  }
}

function setup(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const classifier = Classifier.of((outcome) => (!outcome.ok && outcome.error instanceof Pushback ? Verdict.throttled(outcome.error.ms) : undefined));
  const policy = Resilience.default
    .with({ clock, budget: RetryBudget.none, classifier, backoff: Backoff.exponential({ jitter: Jitter.none }), ...extra })
    .withListener((e) => events.push(e));
  return { clock, events, policy };
}

const delays = (events: CallEvent[]) => events.filter((e) => e.kind === 'retrying').map((e) => e.delay);

describe('per-call attempts (RunOptions.attempts)', () => {
  it('attempts: 1 makes one attempt of a policy allowing three', async () => {
    const { policy } = setup();
    let calls = 0;
    const result = await policy.tryRun(() => Promise.reject(new Error(`fail ${++calls}`)), { attempts: 1 });
    expect([calls, result.reason, result.attempts.length]).toEqual([1, 'attemptsExhausted', 1]);
  });

  it('can lower the policy attempts, never raise them', async () => {
    const { policy, clock } = setup();
    let calls = 0;
    const call = policy.tryRun(() => Promise.reject(new Error(`fail ${++calls}`)), { attempts: 10 });
    await clock.runAll();
    expect([(await call).attempts.length, calls]).toEqual([3, 3]);
  });

  it.each([0, 1.5, -1, '2'])('rejects attempts %j naming the field', (attempts) => {
    const { policy } = setup();
    expect(() => policy.run(() => 1, { attempts: attempts as number })).toThrow(expect.objectContaining({ name: 'PolicyConfigError', field: 'attempts' }));
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
    const { policy, clock } = setup({ deadline: 1000, attemptTimeout: 300, backoff: Backoff.constant(100) });
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
    expect(await policy.run(({ bound, remaining }) => [bound, remaining])).toEqual([Infinity, Infinity]);
  });
});
