import { Admission } from './breaker-state.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { BREAKER_DEFAULTS, SEED_BREAKER_SETTINGS } from './breaker-settings.js';
import { evidentRun } from './recent-outcomes.js';
import { FakeClock } from '../time/fake-clock.js';
import type { VerdictKind } from '../classification/verdict.js';
import { SeededRandom } from '../../testing/seeded-random.js';

/** Seeded uniform [0, 1) source. */
const seeded = (seed: number): (() => number) => new SeededRandom(seed).next;

/** A fake clock that can also be set forward synchronously (for long loops of records; fires nothing). */
class StepClock extends FakeClock {
  set(ms: number): void {
    if (ms > this.current) this.current = ms;
  }
}

/** A default breaker on a fake clock; `attempt` admits and records one outcome of `durationMs` ending now. */
function setup(settings = {}) {
  const clock = new StepClock();
  const opens: number[] = [];
  const breaker = new CircuitBreaker(settings, {
    clock,
    random: () => 0.5,
    onTransition: (_from, to, ms) => to === 'open' && opens.push(ms),
  });
  const attempt = (verdict: VerdictKind, durationMs = 0): Admission => {
    const admission = breaker.admit();
    if (admission !== Admission.Refused) breaker.record(admission, verdict, durationMs);
    return admission;
  };
  return { clock, breaker, opens, attempt };
}

/**
 * `seconds` of attempts at `perSecond`, each Transient with probability `rate` (independently), on
 * the fake clock; returns how often the breaker opened.
 */
function bernoulli(
  rate: number,
  seconds: number,
  perSecond: number,
  seed: number,
  settings = {},
): number {
  const { clock, breaker, opens } = setup(settings);
  const random = seeded(seed);
  const step = 1000 / perSecond;
  for (let i = 0; i < seconds * perSecond; i++) {
    clock.set(i * step);
    const admission = breaker.admit();
    if (admission !== Admission.Refused)
      breaker.record(admission, random() < rate ? 'Transient' : 'Ok', 20, i * step);
  }
  return opens.length;
}

describe('breaker defaults (issue 8: the scenario matrix chose them)', () => {
  it('opens on the 5th Transient attempt in a row from a cold start, for a 1 s break served in [0.5 s, 1 s]', () => {
    const { breaker, opens, attempt } = setup();
    for (let i = 0; i < 4; i++) attempt('Transient');
    expect(breaker.state).toBe('closed');
    attempt('Transient');
    expect(breaker.state).toBe('open');
    expect(opens).toEqual([750]); // equal jitter at random 0.5: 1000/2 + 0.5 × 1000/2
    expect(breaker.retryAfter()).toBe(750);
  });

  it('never cuts off a dependency still answering half its attempts: after 100 successes a run trips only at the 50th failure', () => {
    const { breaker, attempt } = setup();
    for (let i = 0; i < 100; i++) attempt('Ok');
    for (let i = 0; i < 49; i++) attempt('Transient');
    expect(breaker.state).toBe('closed');
    attempt('Transient'); // 50 of the last 100 failed: the floor is reached, and a run of 50 after a 0 % rate is evidence
    expect(breaker.state).toBe('open');
  });

  it('judges only the last 30 s: after a quiet half minute a cold-start run of 5 trips again', () => {
    const { clock, breaker, attempt } = setup();
    for (let i = 0; i < 100; i++) attempt('Ok');
    clock.set(30_001);
    for (let i = 0; i < 5; i++) attempt('Transient');
    expect(breaker.state).toBe('open');
  });

  it('lengthens the run that trips with the error rate seen before it (10⁻⁸ per run, the rate capped at the 50 % floor)', () => {
    expect([0, 0.02, 0.1, 0.2, 0.3, 0.4, 0.5].map((rate) => evidentRun(rate, 5, 1e-8))).toEqual([
      5, 5, 8, 12, 16, 21, 27,
    ]);
    expect(evidentRun(1, 5, 1e-8)).toBe(Infinity);
    expect(evidentRun(0.02, 7, 1e-8)).toBe(7);
  });

  it.each([0.1, 0.2, 0.3, 0.4])(
    'never opens on %p independent failures over 10 minutes at 500 attempts/s (seeds 1–3)',
    (rate) => {
      expect([1, 2, 3].map((seed) => bernoulli(rate, 600, 500, seed))).toEqual([0, 0, 0]);
    },
  );

  it('is a real gate: the seeds’ fixed run of 5 opens at 30 % within a minute, every seed', () => {
    expect(
      [1, 2, 3].map((seed) => bernoulli(0.3, 60, 500, seed, SEED_BREAKER_SETTINGS) > 0),
    ).toEqual([true, true, true]);
  });

  it('does not open when a healthy dependency starts failing 52 % of attempts (the brownout of the matrix), seeds 1–3', () => {
    const opens = [1, 2, 3].map((seed) => {
      const { clock, breaker, opens } = setup();
      const random = seeded(seed);
      for (let i = 0; i < 60_000; i++) {
        clock.set(i * 2);
        breaker.record(
          breaker.admit(),
          random() < (i < 15_000 ? 0.02 : 0.52) ? 'Transient' : 'Ok',
          20,
          i * 2,
        );
      }
      return opens.length;
    });
    expect(opens).toEqual([0, 0, 0]);
  });

  it('probes about once a second while open (no doubling), and two good probes close it', async () => {
    const { clock, breaker, opens, attempt } = setup();
    for (let i = 0; i < 5; i++) attempt('Transient');
    for (let k = 0; k < 4; k++) {
      await clock.advance(750);
      expect(attempt('Transient')).toBe(Admission.Probe); // the probe fails: open again for the same break
    }
    expect(opens).toEqual([750, 750, 750, 750, 750]);
    await clock.advance(750);
    expect(attempt('Ok')).toBe(Admission.Probe);
    expect(attempt('Ok')).toBe(Admission.Probe);
    expect(breaker.state).toBe('closed');
  });

  it('does not judge a successful probe by its latency (the slow-call trip is off)', async () => {
    const { clock, breaker, attempt } = setup();
    for (let i = 0; i < 40; i++) attempt('Ok', 10);
    clock.set(40_000); // the earlier successes leave the 30 s window; the latency baseline keeps them
    for (let i = 0; i < 5; i++) attempt('Transient');
    await clock.advance(1000);
    attempt('Ok', 500); // 50 × the median: a brownout's probe
    attempt('Ok', 500);
    expect(breaker.state).toBe('closed');
    expect([BREAKER_DEFAULTS.slowCallMultiple, BREAKER_DEFAULTS.errorRateMultiple]).toEqual([0, 0]);
  });
});
