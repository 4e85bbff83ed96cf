import { Admission, type BreakerTrip } from './breaker-state.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { SEED_BREAKER_SETTINGS, type BreakerSettings } from './breaker-settings.js';
import { FakeClock } from '../time/fake-clock.js';
import type { VerdictKind } from '../classification/verdict.js';

/** A breaker on the seeds' numbers (5 in a row, relative and slow trips on) recording every opening's trip. */
function setup(settings: BreakerSettings = {}) {
  const clock = new FakeClock();
  const trips: (BreakerTrip | undefined)[] = [];
  const breaker = new CircuitBreaker(
    { jitter: 'none', ...SEED_BREAKER_SETTINGS, ...settings },
    {
      clock,
      random: () => 0.5,
      onTransition: (_from, to, _ms, trip) => {
        if (to === 'open') trips.push(trip);
      },
    },
  );
  const attempt = (verdict: VerdictKind, duration = 0, error?: unknown) => {
    const admission = breaker.admit();
    if (admission !== Admission.Refused)
      breaker.record(admission, verdict, duration, undefined, true, error);
    return admission;
  };
  return { clock, breaker, trips, attempt };
}

describe('what a breaker reports it opened on', () => {
  it('a run of failures: how many, the time since the first, and the last Transient error', async () => {
    const { clock, trips, attempt } = setup();
    const refused = new Error('connect ECONNREFUSED');
    attempt('Transient', 0, new TypeError('first'));
    for (let i = 0; i < 4; i++) {
      await clock.advance(700);
      attempt('Transient', 0, refused);
    }
    expect(trips).toEqual([{ cause: 'failures', count: 5, spanMs: 2800, lastError: refused }]);
  });

  it('an Ok breaks the run: the span starts at the new run’s first failure', async () => {
    const { clock, trips, attempt } = setup();
    attempt('Transient');
    await clock.advance(5000);
    attempt('Ok');
    await clock.advance(1000);
    for (let i = 0; i < 5; i++) {
      attempt('Transient', 0, 'down');
      await clock.advance(100);
    }
    expect(trips).toEqual([{ cause: 'failures', count: 5, spanMs: 400, lastError: 'down' }]);
  });

  it('the relative error rate: the trip window’s failures and the window’s length', async () => {
    // No run rule: only the rate over a 10 s trip window against the baseline can trip.
    const { clock, trips, attempt } = setup({ consecutiveFailures: 0, tripWindow: 10_000 });
    for (let i = 0; i < 200; i++) attempt(i % 100 === 0 ? 'Transient' : 'Ok'); // baseline 1 %
    await clock.advance(20_000); // out of the trip window, still in the 300 s baseline
    for (let i = 0; i < 15; i++) attempt('Ok');
    // 25 % of the window's 20 attempts (its minimum throughput) ≥ 5 × 1 %: the 5th failure trips.
    for (let i = 0; i < 5; i++) attempt('Transient', 0, 'overloaded');
    expect(trips).toEqual([
      { cause: 'failures', count: 5, spanMs: 10_000, lastError: 'overloaded' },
    ]);
  });

  it('a failed probe: one failure and its duration', async () => {
    const { clock, trips, attempt } = setup();
    for (let i = 0; i < 5; i++) attempt('Transient', 0, 'down');
    await clock.advance(15_000);
    attempt('Transient', 320, 'still down');
    expect(trips.slice(1)).toEqual([
      { cause: 'probe', count: 1, spanMs: 320, lastError: 'still down' },
    ]);
  });

  it('a slow probe: an answer, but slow, told apart from a failed one; no error, though one tripped the breaker before', async () => {
    const { clock, trips, attempt } = setup();
    for (let i = 0; i < 20; i++) attempt('Ok', 100);
    await clock.advance(40_000); // the latency baseline is warm: median 100 ms
    for (let i = 0; i < 5; i++) attempt('Transient', 0, 'down');
    await clock.advance(15_000);
    attempt('Ok', 1000);
    expect(trips.slice(1)).toEqual([
      { cause: 'slowProbe', count: 1, spanMs: 1000, lastError: undefined },
    ]);
  });

  it('slow attempts: the trip window’s slow attempts and the window’s length; no error when none failed', async () => {
    const { clock, trips, attempt } = setup();
    for (let i = 0; i < 20; i++) attempt('Ok', 100);
    await clock.advance(40_000); // the latency baseline is warm: median 100 ms; the trip window is 30 s
    for (let i = 0; i < 20; i++) attempt('Ok', 301);
    expect(trips).toEqual([{ cause: 'slow', count: 20, spanMs: 30_000, lastError: undefined }]);
  });

  it('slow attempts after a failure: no error, slowness tripped it', async () => {
    const { clock, trips, attempt } = setup();
    for (let i = 0; i < 20; i++) attempt('Ok', 100);
    await clock.advance(40_000);
    attempt('Transient', 0, 'blip');
    for (let i = 0; i < 20; i++) attempt('Ok', 301);
    expect(trips).toEqual([{ cause: 'slow', count: 19, spanMs: 30_000, lastError: undefined }]);
  });
});
