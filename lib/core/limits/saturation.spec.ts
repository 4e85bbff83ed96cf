import { PolicyConfigError } from '../errors.js';
import { FakeClock } from '../time/fake-clock.js';
import { Breaker } from '../breaker/breaker-value.js';
import type { CallEvent } from '../events/call-events.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { type DelaySource, EventLoopProbe, Saturation, processProbe } from './saturation.js';

class FakeDelays implements DelaySource {
  max = 0;
  resets = 0;
  reset(): void {
    this.max = 0;
    this.resets++;
  }
}

/**
 * A probe on a FakeClock over scripted delays, asked at multiple 5 by a caller that keeps its last
 * answer (hysteresis); `step(ms)` makes the next reading `ms` and answers whether it is saturated.
 */
function holdingProbe(): { probe: EventLoopProbe; step: (ms: number) => Promise<boolean> } {
  const clock = new FakeClock();
  const source = new FakeDelays();
  const probe = new EventLoopProbe(() => source, clock);
  probe.saturated(5);
  let held = false;
  const step = async (ms: number): Promise<boolean> => {
    source.max = ms * 1e6;
    await clock.advance(250);
    return (held = probe.saturated(5, held));
  };
  return { probe, step };
}

describe('EventLoopProbe', () => {
  it('reads the source in ms at most every 250 ms, the delay being the largest of the last 4 readings', async () => {
    const clock = new FakeClock();
    const source = new FakeDelays();
    const probe = new EventLoopProbe(() => source, clock);
    expect(probe.delay).toBe(0); // the first read only starts the measurement
    source.max = 2e6;
    await clock.advance(100);
    expect(probe.delay).toBe(0); // too soon to read again
    await clock.advance(150);
    expect(probe.delay).toBe(2);
    expect(probe.normal).toBe(2);
    source.max = 200e6; // one 200 ms block
    await clock.advance(250);
    expect(probe.delay).toBe(200);
    for (let i = 0; i < 3; i++) {
      source.max = 1e6;
      await clock.advance(250);
      expect(probe.delay).toBe(200);
    }
    source.max = 1e6;
    await clock.advance(250);
    expect(probe.delay).toBe(1);
  });

  it('is saturated above multiple × its normal and above the 20 ms floor, one episode per stretch', async () => {
    const clock = new FakeClock();
    const source = new FakeDelays();
    const probe = new EventLoopProbe(() => source, clock);
    probe.saturated(5);
    const step = async (ms: number): Promise<boolean> => {
      source.max = ms * 1e6;
      await clock.advance(250);
      return probe.saturated(5);
    };
    expect(await step(2)).toBe(false);
    expect(await step(15)).toBe(false); // 7.5× normal but under the floor
    expect(probe.episode).toBe(0);
    for (let i = 0; i < 4; i++) await step(2);
    expect(await step(60)).toBe(true);
    expect(await step(60)).toBe(true);
    expect(probe.episode).toBe(1);
    const normal = probe.normal!;
    expect(normal).toBeLessThan(5); // not learned from saturated readings
    for (let i = 0; i < 4; i++) await step(1);
    expect(probe.saturated(5)).toBe(false);
    expect(await step(80)).toBe(true);
    expect(probe.episode).toBe(2);
  });

  it('one busy phase hovering about the floor is one episode: it ends only once the delay falls under half of what began it', async () => {
    const { probe, step } = holdingProbe();
    for (let i = 0; i < 8; i++) await step(1);
    // Busy: blocks of 30 ms, between them a loop still 15 ms late (15× its normal, under the floor).
    const busy: boolean[] = [];
    for (const ms of [30, 15, 15, 15, 15, 30, 15, 15, 15, 15, 30]) busy.push(await step(ms));
    expect(busy.every(Boolean)).toBe(true);
    expect(probe.episode).toBe(1);
    // Back to normal: the episode ends once the delay (the largest of the last 4 readings) is under 10 ms.
    const after: boolean[] = [];
    for (let i = 0; i < 4; i++) after.push(await step(1));
    expect(after).toEqual([true, true, true, false]);
    expect(await step(30)).toBe(true);
    expect(probe.episode).toBe(2);
  });

  it('a loop that settles a little slower after a spike is not saturated for ever: the hysteresis holds at most 2 s past the last reading above the threshold', async () => {
    const { probe, step } = holdingProbe();
    for (let i = 0; i < 40; i++) await step(0);
    for (let i = 0; i < 4; i++) expect(await step(25)).toBe(true);
    // Then a steady 12 ms: between half the 20 ms floor and the floor, never saturated on its own.
    const steady: boolean[] = [];
    for (let i = 0; i < 400; i++) steady.push(await step(12));
    // 3 readings still see a 25 in the last four; 8 more (2 s) are held; then the episode is over.
    expect(steady.indexOf(false)).toBe(11);
    expect(steady.slice(11).every((s) => !s)).toBe(true);
    expect(probe.episode).toBe(1);
    expect(probe.normal).toBeCloseTo(12, 1); // learned again once the episode ended
  });

  it('a Saturation asked last during a spike does not stay saturated after a quiet spell', async () => {
    const clock = new FakeClock();
    const source = new FakeDelays();
    const probe = new EventLoopProbe(() => source, clock);
    const asked = Saturation.above(5, probe);
    const idle = Saturation.above(5, probe);
    const step = async (ms: number): Promise<void> => {
      source.max = ms * 1e6;
      await clock.advance(250);
      void asked.saturated;
    };
    for (let i = 0; i < 8; i++) await step(0);
    await step(30);
    expect([asked.saturated, idle.saturated]).toEqual([true, true]);
    // 10 s at 15 ms (under the floor, above half of it), `idle` not asked meanwhile.
    for (let i = 0; i < 40; i++) await step(15);
    expect([asked.saturated, idle.saturated]).toEqual([false, false]);
    expect(probe.episode).toBe(1);
  });

  it('the process-wide probe reads a loop blocked 200 ms every 500 ms as about 200 ms, not the sample interval, not nanoseconds', async () => {
    // The one test on real time: it measures Node's own event-loop histogram, not policy behaviour.
    void processProbe.delay; // starts the measurement
    for (let i = 0; i < 2; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      const start = performance.now();
      while (performance.now() - start < 200);
      await new Promise<void>((resolve) => {
        const until = performance.now() + 300;
        const spin = (): void => void (performance.now() >= until ? resolve() : setImmediate(spin));
        spin();
      });
    }
    const delay = processProbe.delay;
    expect(delay).toBeGreaterThan(150);
    expect(delay).toBeLessThan(400);
  });
});

describe('Saturation', () => {
  it('refuses a multiple that is not a finite number > 1', () => {
    expect(() => Saturation.above(1)).toThrow(
      new PolicyConfigError(
        'saturation',
        1,
        "must be a finite number > 1 (a multiple of the event loop's normal delay, e.g. 5)",
      ),
    );
    expect(() => Saturation.above(Number.NaN)).toThrow(PolicyConfigError);
    expect(Saturation.above(5).multiple).toBe(5);
  });
});

describe('a policy with saturation: measured terms stop learning, one saturationDetected per episode', () => {
  it("the breaker's latency baseline learns nothing while saturated; the episode is reported once, with the loop's delay", async () => {
    const probeClock = new FakeClock();
    const source = new FakeDelays();
    const probe = new EventLoopProbe(() => source, probeClock);
    /** One reading of the loop's delay (as the executor would take it). */
    const loop = async (ms: number): Promise<void> => {
      source.max = ms * 1e6;
      await probeClock.advance(250);
      void probe.saturated(5);
    };
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const policy = Resilience.default.with({
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      breaker: Breaker.with({
        latencyBaselineSamples: 5,
        slowCallMultiple: 3,
        tripWindow: 1_000,
        baselineWindow: 100_000,
      }),
      saturation: Saturation.above(5, probe),
      onEvent: (event) => void (event.kind === 'saturationDetected' && events.push(event)),
    });
    /** One call whose attempt takes `ms` on the policy's clock. */
    const call = async (ms: number): Promise<void> => {
      const done = policy.run(() => new Promise<void>((resolve) => clock.setTimer(ms, resolve)));
      await clock.advance(ms);
      await done;
    };
    void probe.delay; // starts the measurement
    for (let i = 0; i < 4; i++) await loop(2);
    for (let i = 0; i < 5; i++) await call(10);
    await clock.advance(10_000); // past the trip window: into the baseline
    expect(policy.breaker()!.snapshot().latencyMedian).toBe(10);
    expect(events).toEqual([]);

    await loop(60); // saturated: 60 ms against a normal of 2
    for (let i = 0; i < 20; i++) await call(400);
    await clock.advance(10_000);
    expect(policy.breaker()!.snapshot().latencyMedian).toBe(10); // 20 slow successes, none learned
    expect(policy.breaker()!.state).toBe('closed'); // and none counted slow
    expect(events.map((event) => [event.kind, event.policy, event.duration])).toEqual([
      ['saturationDetected', '', 60],
    ]);

    for (let i = 0; i < 4; i++) await loop(2); // the episode ends
    await call(12);
    expect(events).toHaveLength(1);
    await loop(90); // a second episode
    await call(400);
    expect(events.map((event) => event.duration)).toEqual([60, 90]);
    // Learning again once the loop is back: successes feed the baseline.
    for (let i = 0; i < 4; i++) await loop(2);
    for (let i = 0; i < 10; i++) await call(20);
    await clock.advance(10_000);
    expect(policy.breaker()!.snapshot().latencyMedian).toBe(20); // 5 of 10 ms, 1 of 12, 10 of 20
  });
});
