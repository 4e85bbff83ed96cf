import { describe, expect, it } from '@jest/globals';
import { Classifier } from '../classification/classifier.js';
import { Verdict } from '../classification/verdict.js';
import { CallRejectedError } from '../errors.js';
import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import { stopReasonOf } from './stop-reasons.js';

class AnswerError extends Error {}

const clock = new FakeClock();
const policy = Resilience.default.with({
  attempts: 3,
  backoff: Backoff.none,
  clock,
  classifier: Classifier.forErrors(Classifier.when(AnswerError, Verdict.permanent)),
});

async function rejection(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => {
      throw new Error('resolved');
    },
    (error: unknown) => error,
  );
}

describe('stopReasonOf', () => {
  it('tells why the call that rejected with an error stopped', async () => {
    let attempts = 0;
    const exhausted = await rejection(
      policy.run(() => Promise.reject(Object.assign(new Error(`down ${++attempts}`)))),
    );
    expect([attempts, (exhausted as Error).message, stopReasonOf(exhausted)]).toEqual([
      3,
      'down 3',
      'attemptsExhausted',
    ]);
    expect(
      stopReasonOf(await rejection(policy.run(() => Promise.reject(new AnswerError('no'))))),
    ).toBe('permanent');
    const controller = new AbortController();
    controller.abort(new Error('caller gave up'));
    expect(
      stopReasonOf(await rejection(policy.run(() => 'never', { signal: controller.signal }))),
    ).toBe('cancelled');
  });

  it('marks a refusal with its stop reason, and nothing for primitives, unseen errors or a policy that adds nothing', async () => {
    const refusing = policy.with({
      budget: RetryBudget.automaticWith({ fraction: 0, minimumPerSecond: 0 }),
    });
    const bucket = refusing.bucket()!;
    while (bucket.tryAcquire());
    const pending = rejection(refusing.run(() => Promise.reject(new Error('down'))));
    // The guarded pause runs on the fake clock: the refusal is reported after it.
    await clock.advance(100);
    const refused = await pending;
    expect(refused).toBeInstanceOf(CallRejectedError);
    expect(stopReasonOf(refused)).toBe('budgetExhausted');
    expect(
      stopReasonOf(await rejection(policy.run(() => Promise.reject('a string')))),
    ).toBeUndefined();
    expect(stopReasonOf(new Error('never thrown through a policy'))).toBeUndefined();
    // One attempt, no budget, breaker, bound or listener: the work's own promise is the call's.
    const bare = Resilience.default.with({ attempts: 1, budget: RetryBudget.none });
    expect(
      stopReasonOf(await rejection(bare.run(() => Promise.reject(new Error('down'))))),
    ).toBeUndefined();
  });
});
