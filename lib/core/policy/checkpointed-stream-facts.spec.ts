import { describe, expect, it } from '@jest/globals';
import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Classifier } from '../classification/classifier.js';
import type { ClassifyContext } from '../classification/classifier-rule.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from './policy.js';

class Broken extends Error {
  override name = 'Broken';
}

/**
 * A feed of items 0..3 whose openings go: the first fails before its first item, the second
 * delivers 0 and 1 then breaks, the third (the restart at 2) fails before its first item, the
 * fourth delivers 2 and 3 and ends.
 */
function feed() {
  const opens: number[] = [];
  const source = (from: number) =>
    (async function* () {
      const k = opens.push(from);
      if (k === 1 || k === 3) throw new Broken(`open ${k} refused`);
      for (let seq = from; seq < 4; seq++) {
        if (k === 2 && seq === 2) throw new Broken('reset after 2');
        yield { seq };
      }
    })();
  return { opens, source };
}

/** A policy of 3 attempts, no waits, whose classifier records what it classified and the context. */
function recording() {
  const seen: { outcome: string; context: ClassifyContext }[] = [];
  const policy = Resilience.default.with({
    attempts: 3,
    backoff: Backoff.none,
    budget: RetryBudget.none,
    clock: new FakeClock(),
    classifier: Classifier.of((outcome, context) => {
      seen.push({ outcome: outcome.ok ? 'stream' : (outcome.error as Error).message, context });
      return undefined;
    }),
  });
  return { seen, policy };
}

async function readAll(stream: AsyncIterable<{ seq: number }>): Promise<number[]> {
  const seqs: number[] = [];
  for await (const item of stream) seqs.push(item.seq);
  return seqs;
}

describe('a checkpointed stream hands RunOptions.facts to every classification', () => {
  it('every segment’s attempts and the restart decision see the same facts object', async () => {
    const { seen, policy } = recording();
    const { opens, source } = feed();
    const facts = { tag: 'F' };
    const stream = await policy.run(
      { start: 0, checkpoint: (item: { seq: number }) => item.seq + 1, source },
      { facts },
    );
    expect(await readAll(stream)).toEqual([0, 1, 2, 3]);
    expect(opens).toEqual([0, 0, 2, 2]);
    expect(stream.restarts).toBe(1);
    expect(seen.map((entry) => entry.outcome)).toEqual([
      'open 1 refused', // first segment, attempt 1
      'stream', // first segment, attempt 2: its first item
      'reset after 2', // the mid-stream failure: may it restart?
      'open 3 refused', // the restart, attempt 2
      'stream', // the restart, attempt 3: its first item
    ]);
    expect(seen.map((entry) => entry.context)).toEqual(
      Array.from({ length: 5 }, () => ({ callerAborted: false, facts })),
    );
    expect(seen.every((entry) => entry.context.facts === facts)).toBe(true);
  });

  it('without facts, no classification of the stream has a facts key', async () => {
    const { seen, policy } = recording();
    const { source } = feed();
    const stream = await policy.run({
      start: 0,
      checkpoint: (item: { seq: number }) => item.seq + 1,
      source,
    });
    expect(await readAll(stream)).toEqual([0, 1, 2, 3]);
    expect(seen.map((entry) => Object.keys(entry.context))).toEqual(
      Array.from({ length: 5 }, () => ['callerAborted']),
    );
    expect(seen.every((entry) => entry.context.callerAborted === false)).toBe(true);
  });
});
