import { Breaker } from '../breaker/breaker-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import type { CallEvent } from '../events/call-events.js';
import type { Policy } from '../policy/policy.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';

/**
 * Clock readings a successful call takes, per preset: each costs about one raw awaited call on a
 * real clock (`performance.now()`, ~50 ns), so the success path reads only what a rule needs — the
 * start for a deadline or a report, the start and end for a breaker's or a report's durations — and
 * a call reads its start and end once even when several rules need them.
 */
class CountingClock extends FakeClock {
  reads = 0;

  override now(): number {
    this.reads++;
    return super.now();
  }
}

async function readsPerCall(
  make: (clock: CountingClock) => Policy,
  tryRun = false,
): Promise<number> {
  const clock = new CountingClock();
  const policy = make(clock);
  await policy.run(async () => 0); // the first call resolves what the policy keeps (breaker, budget)
  clock.reads = 0;
  for (let i = 0; i < 10; i++) {
    if (tryRun) await policy.tryRun(async () => i);
    else await policy.run(async () => i);
  }
  return clock.reads / 10;
}

describe('clock readings per successful call', () => {
  it('reads none without a deadline, breaker, limit or report', async () => {
    expect(await readsPerCall((clock) => Resilience.default.with({ clock }))).toBe(0);
    expect(
      await readsPerCall((clock) =>
        Resilience.default.with({ clock, attempts: 1, budget: RetryBudget.none }),
      ),
    ).toBe(0);
  });

  it('reads the attempt start and end for a breaker, the start once for a deadline beside it', async () => {
    expect(
      await readsPerCall((clock) =>
        Resilience.default.with({
          clock,
          attempts: 1,
          budget: RetryBudget.none,
          breaker: Breaker.default,
        }),
      ),
    ).toBe(2);
    expect(await readsPerCall((clock) => Resilience.http.with({ clock }))).toBe(2);
  });

  it('ends a reported call at the end its last attempt read (a listener, a log)', async () => {
    const onEvent = (): void => undefined;
    expect(await readsPerCall((clock) => Resilience.default.with({ clock, onEvent }))).toBe(2);
    expect(await readsPerCall((clock) => Resilience.default.with({ clock }), true)).toBe(2);
    expect(await readsPerCall((clock) => Resilience.http.with({ clock, onEvent }))).toBe(2);
  });

  it("reports the call's duration from its start to its last attempt's end", async () => {
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const policy = Resilience.default.with({ clock, onEvent: (e) => void events.push(e) });
    const call = policy.tryRun(
      () => new Promise((resolve) => clock.setTimer(40, () => resolve('v'))),
    );
    await clock.advance(40);
    const result = await call;
    expect(result.duration).toBe(40);
    expect(events.map((e) => [e.kind, e.duration])).toEqual([
      ['attempt', 40],
      ['succeeded', 40],
    ]);
  });
});
