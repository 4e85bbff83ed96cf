import { describe, expect, it } from '@jest/globals';
import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Classifier } from '../classification/classifier.js';
import type { ClassifierRule, ClassifyContext } from '../classification/classifier-rule.js';
import { PolicyConfigError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';

/** A policy of three attempts, no waits, whose classifier is `rule`. */
function policyOf(rule: ClassifierRule) {
  return Resilience.default.with({
    attempts: 3,
    backoff: Backoff.none,
    budget: RetryBudget.none,
    clock: new FakeClock(),
    classifier: Classifier.of(rule),
  });
}

/** A policy whose classifier rule records every context it is handed. */
function recording() {
  const contexts: ClassifyContext[] = [];
  const policy = policyOf((_outcome, context) => {
    contexts.push(context);
    return undefined;
  });
  return { contexts, policy };
}

describe('RunOptions.facts reach the classifier as ClassifyContext.facts', () => {
  it('hands the same facts object to the classification of every attempt', async () => {
    const { contexts, policy } = recording();
    const facts = { repeatable: false, tenant: 'a' };
    let n = 0;
    const value = await policy.run(
      () => {
        n++;
        if (n < 3) throw new Error(`down ${n}`);
        return 'up';
      },
      { facts },
    );
    expect(value).toBe('up');
    expect(contexts).toEqual([
      { callerAborted: false, facts },
      { callerAborted: false, facts },
      { callerAborted: false, facts },
    ]);
    expect(contexts.every((context) => context.facts === facts)).toBe(true);
  });

  it('a call without facts classifies with the shared frozen context (no facts key)', async () => {
    const { contexts, policy } = recording();
    await policy.run(() => Promise.reject(new Error('down'))).catch(() => undefined);
    expect(contexts).toHaveLength(3);
    expect(contexts.map((context) => Object.keys(context))).toEqual([
      ['callerAborted'],
      ['callerAborted'],
      ['callerAborted'],
    ]);
    expect(Object.isFrozen(contexts[0])).toBe(true);
    expect(contexts[1]).toBe(contexts[0]);
  });

  it('a rule may record on the facts: the caller reads what it decided after the call', async () => {
    const stops: unknown[] = [];
    const policy = policyOf((outcome, context) => {
      (context.facts as { stops?: unknown[] } | undefined)?.stops?.push(outcome.error);
      return undefined;
    });
    const failure = new Error('down');
    await policy.run(() => Promise.reject(failure), { facts: { stops } }).catch(() => undefined);
    expect(stops).toEqual([failure, failure, failure]);
  });

  it.each([null, 5, 'repeatable'])('refuses facts that are not an object: %p', (facts) => {
    const { policy } = recording();
    expect(() => policy.run(() => 1, { facts: facts as unknown as object })).toThrow(
      new PolicyConfigError(
        'facts',
        facts,
        "must be an object (the call's facts for its classifier)",
      ),
    );
  });
});
