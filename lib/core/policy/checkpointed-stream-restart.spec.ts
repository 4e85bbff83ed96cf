import { Ambient } from '../ambient/ambient-context.js';
import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from './policy.js';

class Broken extends Error {
  override name = 'Broken';
}

/** A feed of 10 numbered items whose k-th opening breaks after `breakAfter[k]` items. */
function feed(breakAfter: number[]) {
  const opens: number[] = [];
  const source = (from: number) =>
    (async function* () {
      const k = opens.push(from) - 1;
      let sent = 0;
      for (let i = from; i < 10; i++) {
        if (sent === breakAfter[k]) throw new Broken(`reset after ${sent}`);
        sent++;
        yield { seq: i };
      }
    })();
  return { opens, source };
}

describe.each(['return()', 'caller abort'])(
  'a checkpointed stream ended (%s) while its restart waits in backoff',
  (how) => {
    it('never re-opens the source, and the pending pull settles', async () => {
      const clock = new FakeClock();
      const caller = new AbortController();
      const policy = Resilience.default.with({
        clock,
        backoff: Backoff.constant(1000),
        budget: RetryBudget.none,
      });
      const { source, opens } = feed([2]);
      const stream = await policy.run(
        { start: 0, checkpoint: (item: { seq: number }) => item.seq + 1, source },
        { signal: caller.signal },
      );
      expect((await stream.next()).value).toEqual({ seq: 0 });
      expect((await stream.next()).value).toEqual({ seq: 1 });
      const pull = stream.next().then(
        (result) => `done ${result.done}`,
        (error: Error) => error.message,
      );
      await clock.advance(10);
      if (how === 'return()') await stream.return();
      else caller.abort(new Error('caller gone'));
      await clock.advance(2000);
      expect(await pull).toBe(how === 'return()' ? 'done true' : 'caller gone');
      expect(opens).toEqual([0]);
      expect(clock.pending).toBe(0);
    });
  },
);

describe('a checkpointed restart under useAmbientDeadline', () => {
  it.each([undefined, 30_000])(
    'is bounded by the inbound caller’s time left (policy deadline %s)',
    async (deadline) => {
      const clock = new FakeClock();
      const policy = Resilience.default.with({
        clock,
        backoff: Backoff.none,
        budget: RetryBudget.none,
        useAmbientDeadline: true,
        deadline,
      });
      const remaining: number[] = [];
      const source = (from: number, ctx: { signal: AbortSignal; remaining: number }) =>
        (async function* () {
          remaining.push(ctx.remaining);
          if (from === 0) {
            yield { seq: 0 };
            throw new Broken('reset');
          }
          await new Promise((resolve) =>
            ctx.signal.addEventListener('abort', resolve, { once: true }),
          );
        })();
      const pull = Ambient.run({ remaining: 500 }, async () => {
        const stream = await policy.run({
          start: 0,
          checkpoint: (item: { seq: number }) => item.seq + 1,
          source,
        });
        await stream.next();
        return stream.next().then(
          (result) => (result.done === true ? 'done' : 'value'),
          (error: Error) => error.name,
        );
      });
      await clock.advance(1000);
      expect(await pull).toBe('DeadlineExceededError');
      expect(remaining.length).toBe(2);
      expect(remaining[1]).toBeLessThanOrEqual(500);
    },
  );
});
