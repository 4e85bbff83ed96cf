import { jest } from '@jest/globals';
import { Admission, type BreakerState } from './breaker-state.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { SEED_BREAKER_SETTINGS, type BreakerSettings } from './breaker-settings.js';
import { FakeClock } from '../time/fake-clock.js';
import type { VerdictKind } from '../classification/verdict.js';

/** Seeded uniform [0, 1) source, so jitter tests are repeatable. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A breaker on a fake clock. The mechanism tests below run on the seeds' numbers (5 in a row at any
 * rate, relative and slow trips on, 15 s breaks doubling to 2 min), which exercise every rule; the
 * defaults the scenario matrix chose have their own tests at the end.
 */
function setup(settings: BreakerSettings = {}, random: () => number = () => 0.5, start = 0) {
  const clock = new FakeClock(start);
  const transitions: string[] = [];
  const breaker = new CircuitBreaker(
    { jitter: 'none', ...SEED_BREAKER_SETTINGS, ...settings },
    { clock, random, onTransition: (from, to, ms) => transitions.push(`${from}->${to} ${ms}`) },
  );
  /** One admitted attempt with the given outcome; returns what admit() said. */
  // Duration 0 by default: the clock does not move inside an attempt unless a test says so.
  const attempt = (verdict: VerdictKind, duration = 0): Admission => {
    const admission = breaker.admit();
    if (admission !== Admission.Refused) breaker.record(admission, verdict, duration);
    return admission;
  };
  const times = (n: number, verdict: VerdictKind, duration = 0) => {
    for (let i = 0; i < n; i++) attempt(verdict, duration);
  };
  return { clock, breaker, transitions, attempt, times };
}

/** Trips a fresh-ish closed breaker with 5 consecutive Transient attempts. */
function trip(attempt: (v: VerdictKind) => Admission) {
  for (let i = 0; i < 5; i++) attempt('Transient');
}

describe('CircuitBreaker: consecutive failures', () => {
  it('trips at exactly the 5th consecutive Transient attempt, from cold start', () => {
    const { breaker, times, attempt, transitions } = setup();
    times(4, 'Transient');
    expect(breaker.state).toBe('closed');
    expect(breaker.admit()).toBe(Admission.Closed);
    breaker.record(Admission.Closed, 'Transient', 10);
    expect(breaker.state).toBe('open');
    expect(transitions).toEqual(['closed->open 15000']);
    expect(attempt('Ok')).toBe(Admission.Refused);
    expect(breaker.retryAfter()).toBe(15000);
  });

  it('an Ok breaks the run; Throttled, Permanent and Limited neither extend nor break it', () => {
    const { breaker, times, attempt } = setup();
    times(4, 'Transient');
    attempt('Ok');
    times(4, 'Transient');
    expect(breaker.state).toBe('closed');
    attempt('Throttled');
    attempt('Permanent');
    attempt('Limited');
    expect(breaker.snapshot().consecutiveFailures).toBe(4);
    attempt('Transient');
    expect(breaker.state).toBe('open');
  });

  it('consecutiveFailures: 0 turns the rule off', () => {
    const { breaker, times } = setup({ consecutiveFailures: 0 });
    times(50, 'Transient');
    expect(breaker.state).toBe('closed');
  });

  it('admits without reading the clock while closed', () => {
    const { breaker, clock } = setup();
    const now = jest.spyOn(clock, 'now');
    for (let i = 0; i < 10; i++) expect(breaker.admit()).toBe(Admission.Closed);
    expect(now).not.toHaveBeenCalled();
  });
});

describe('CircuitBreaker: break and half-open', () => {
  it('refuses until the break ends, then admits exactly one probe', async () => {
    const { breaker, clock, attempt, transitions } = setup();
    trip(attempt);
    await clock.advance(14_999);
    expect(breaker.admit()).toBe(Admission.Refused);
    expect(breaker.retryAfter()).toBe(1);
    expect(breaker.state).toBe('open');
    await clock.advance(1);
    expect(breaker.retryAfter()).toBe(0);
    expect(breaker.state).toBe('halfOpen');
    expect(breaker.admit()).toBe(Admission.Probe);
    expect(breaker.admit()).toBe(Admission.Refused);
    expect(breaker.snapshot().probesInFlight).toBe(1);
    expect(transitions).toEqual(['closed->open 15000', 'open->halfOpen 15000']);
  });

  it('closes after exactly 2 consecutive successful probes, resetting the doubling', async () => {
    const { breaker, clock, attempt, transitions } = setup();
    trip(attempt);
    await clock.advance(15_000);
    expect(attempt('Ok')).toBe(Admission.Probe);
    expect(breaker.state).toBe('halfOpen');
    expect(attempt('Ok')).toBe(Admission.Probe);
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().consecutiveOpens).toBe(0);
    expect(transitions.at(-1)).toBe('halfOpen->closed 15000');
    trip(attempt);
    expect(breaker.retryAfter()).toBe(15_000);
  });

  it('a failed probe re-opens at once; breaks double 15, 30, 60, 120, 120 s (jitter none)', async () => {
    const { breaker, clock, attempt } = setup();
    trip(attempt);
    const served: number[] = [breaker.retryAfter()];
    for (let i = 0; i < 4; i++) {
      await clock.advance(served.at(-1)!);
      expect(attempt('Transient')).toBe(Admission.Probe);
      expect(breaker.state).toBe('open');
      served.push(breaker.retryAfter());
    }
    expect(served).toEqual([15_000, 30_000, 60_000, 120_000, 120_000]);
    expect(breaker.snapshot().consecutiveOpens).toBe(5);
  });

  it('honours configured base, maximum and probe counts', async () => {
    const { breaker, clock, attempt } = setup({
      breakDuration: 1000,
      maximumBreak: 3000,
      halfOpenProbes: 3,
      closeAfter: 3,
    });
    trip(attempt);
    expect(breaker.retryAfter()).toBe(1000);
    await clock.advance(1000);
    const admissions = [breaker.admit(), breaker.admit(), breaker.admit(), breaker.admit()];
    expect(admissions).toEqual([
      Admission.Probe,
      Admission.Probe,
      Admission.Probe,
      Admission.Refused,
    ]);
    breaker.record(Admission.Probe, 'Transient', 10);
    expect(breaker.retryAfter()).toBe(2000);
    await clock.advance(2000);
    expect(attempt('Transient')).toBe(Admission.Probe);
    expect(breaker.retryAfter()).toBe(3000);
    await clock.advance(3000);
    expect(attempt('Transient')).toBe(Admission.Probe);
    expect(breaker.retryAfter()).toBe(3000);
  });

  it.each<[VerdictKind]>([['Throttled'], ['Permanent'], ['Limited']])(
    'a %s probe returns its slot and leaves the success streak as it was',
    async (verdict) => {
      const { breaker, clock, attempt } = setup();
      trip(attempt);
      await clock.advance(15_000);
      expect(attempt('Ok')).toBe(Admission.Probe);
      expect(attempt(verdict)).toBe(Admission.Probe);
      expect(breaker.state).toBe('halfOpen');
      expect(breaker.snapshot().probesInFlight).toBe(0);
      expect(clock.pending).toBe(0);
      expect(attempt('Ok')).toBe(Admission.Probe);
      expect(breaker.state).toBe('closed');
    },
  );

  it('an Ok or Transient probe returns its slot and clears its probe timer', async () => {
    const { breaker, clock, attempt } = setup({ closeAfter: 3 });
    trip(attempt);
    await clock.advance(15_000);
    expect(breaker.admit()).toBe(Admission.Probe);
    expect(clock.pending).toBe(1);
    breaker.record(Admission.Probe, 'Ok', 10);
    expect(clock.pending).toBe(0);
    expect(breaker.snapshot().probesInFlight).toBe(0);
    expect(breaker.admit()).toBe(Admission.Probe);
    breaker.record(Admission.Probe, 'Transient', 10);
    expect(clock.pending).toBe(0);
    expect(breaker.state).toBe('open');
  });

  it('a probe that never settles frees its slot after probeTimeout; its late record is swallowed', async () => {
    const { breaker, clock, attempt } = setup({ probeTimeout: 5000 });
    trip(attempt);
    await clock.advance(15_000);
    expect(breaker.admit()).toBe(Admission.Probe); // never settles in time
    await clock.advance(4_999);
    expect(breaker.admit()).toBe(Admission.Refused);
    await clock.advance(1);
    expect(clock.pending).toBe(0);
    expect(breaker.snapshot().probesInFlight).toBe(0);
    expect(breaker.admit()).toBe(Admission.Probe); // the freed slot, taken by a second probe
    breaker.record(Admission.Probe, 'Ok', 6000); // the first probe, late: an orphan
    const afterLate = breaker.snapshot();
    expect(afterLate.state).toBe('halfOpen');
    expect(afterLate.probesInFlight).toBe(1);
    expect(breaker.admit()).toBe(Admission.Refused);
    breaker.record(Admission.Probe, 'Ok', 10); // the second probe
    expect(breaker.state).toBe('halfOpen'); // the expired probe reset the streak: 1 of 2
    expect(attempt('Ok')).toBe(Admission.Probe);
    expect(breaker.state).toBe('closed');
  });

  it('a record for a probe released by a state change does not free a later probe slot', async () => {
    const { breaker, clock, attempt } = setup();
    trip(attempt);
    await clock.advance(15_000);
    expect(breaker.admit()).toBe(Admission.Probe); // probe A, still running
    breaker.reset();
    trip(attempt);
    await clock.advance(15_000);
    expect(breaker.admit()).toBe(Admission.Probe); // probe B
    breaker.record(Admission.Probe, 'Ok', 10); // A settles late
    expect(breaker.snapshot().probesInFlight).toBe(1);
    expect(breaker.admit()).toBe(Admission.Refused);
  });
});

describe('CircuitBreaker: jitter', () => {
  it('equal jitter never serves less than half the break over 2000 seeded draws', async () => {
    const { breaker, attempt } = setup({ jitter: 'equal' }, mulberry32(42));
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < 2000; i++) {
      trip(attempt);
      const served = breaker.retryAfter();
      min = Math.min(min, served);
      max = Math.max(max, served);
      breaker.reset();
    }
    expect(min).toBeGreaterThanOrEqual(7500);
    expect(max).toBeLessThanOrEqual(15_000);
    // The second half is really random: the draws reach both ends of it.
    expect(min).toBeLessThan(7600);
    expect(max).toBeGreaterThan(14_900);
  });

  it('serves exactly break/2 + random × break/2 with equal jitter, random × break with full', () => {
    const equal = setup({ jitter: 'equal' }, () => 0.25);
    trip(equal.attempt);
    expect(equal.breaker.retryAfter()).toBe(7500 + 0.25 * 7500);
    const full = setup({ jitter: 'full' }, () => 0.25);
    trip(full.attempt);
    expect(full.breaker.retryAfter()).toBe(3750);
  });
});

describe('CircuitBreaker: relative error rate', () => {
  it('a dependency that always fails 30 % never trips (10 minutes at 20 attempts/s)', async () => {
    const { breaker, clock, attempt, transitions } = setup();
    const pattern: VerdictKind[] = [
      'Transient',
      'Ok',
      'Transient',
      'Ok',
      'Transient',
      'Ok',
      'Ok',
      'Ok',
      'Ok',
      'Ok',
    ];
    for (let second = 0; second < 600; second++) {
      for (let i = 0; i < 20; i++) expect(attempt(pattern[i % 10]!)).toBe(Admission.Closed);
      await clock.advance(1000);
    }
    expect(transitions).toEqual([]);
    const snapshot = breaker.snapshot();
    expect(snapshot.errorBaselineWarm).toBe(true);
    expect(snapshot.errorBaselineCalls).toBe(6000);
    expect(snapshot.errorBaselineRate).toBeCloseTo(0.3, 10);
  });

  /** 300 s at 200 attempts/s with 12 failures (0.02 %), then 29 s idle: the baseline holds exactly that. */
  async function quietBaseline(settings: BreakerSettings) {
    const s = setup(settings);
    let n = 0;
    for (let second = 0; second < 300; second++) {
      for (let i = 0; i < 200; i++) s.attempt(n++ % 5000 === 4999 ? 'Transient' : 'Ok');
      await s.clock.advance(1000);
    }
    await s.clock.advance(29_000);
    const snapshot = s.breaker.snapshot();
    expect(snapshot.errorBaselineCalls).toBe(60_000);
    expect(snapshot.errorBaselineRate).toBe(12 / 60_000);
    expect(snapshot.tripWindowCalls).toBe(0);
    return s;
  }

  it('0.02 % → 0.1 % trips at the 2nd failure, once the absolute floor is lowered to 0.05 %', async () => {
    const { breaker, attempt } = await quietBaseline({ minimumErrorRate: 0.0005 });
    for (let call = 1; call < 2000; call++) attempt(call % 1000 === 0 ? 'Transient' : 'Ok');
    expect(breaker.state).toBe('closed'); // 1 failure in 1999: below the 2-failure minimum
    attempt('Transient'); // 2 in 2000 = 0.1 % = 5 × 0.02 %
    expect(breaker.state).toBe('open');
  });

  it('0.02 % → 0.09 % does not trip (under 5 × the baseline)', async () => {
    const { breaker, attempt } = await quietBaseline({ minimumErrorRate: 0.0005 });
    for (let call = 1; call <= 10_000; call++) attempt(call % 1112 === 0 ? 'Transient' : 'Ok');
    expect(breaker.snapshot().tripWindowFailures).toBe(8);
    expect(breaker.state).toBe('closed');
  });

  it('with the default 5 % absolute floor, 0.02 % → 0.1 % does not trip', async () => {
    const { breaker, attempt } = await quietBaseline({});
    for (let call = 1; call <= 10_000; call++) attempt(call % 1000 === 0 ? 'Transient' : 'Ok');
    expect(breaker.snapshot().tripWindowFailures).toBe(10);
    expect(breaker.state).toBe('closed');
  });

  /** 100 Ok outcomes at t=0, then 30 s later they are the baseline (0 % errors) and the trip window is empty. */
  async function armed(settings: BreakerSettings = {}, outcomes = 100) {
    const s = setup(settings);
    s.times(outcomes, 'Ok');
    await s.clock.advance(30_000);
    return s;
  }

  it('needs 2 failures and 20 attempts in the window and reaches the 5 % floor inclusively', async () => {
    const { breaker, attempt, times } = await armed();
    attempt('Transient');
    times(19, 'Ok');
    expect(breaker.state).toBe('closed'); // 1 failure in 20 = 5 %: only one failure
    times(19, 'Ok');
    attempt('Transient'); // 2 in 40 = 5 %
    expect(breaker.state).toBe('open');
  });

  it('2 failures in 41 attempts (4.9 %) stay under the floor', async () => {
    const { breaker, attempt, times } = await armed();
    attempt('Transient');
    times(39, 'Ok');
    attempt('Transient');
    expect(breaker.state).toBe('closed');
  });

  it('2 failures in fewer than 20 attempts do not trip (throughput minimum)', async () => {
    const { breaker, attempt, times } = await armed();
    times(10, 'Ok');
    attempt('Transient');
    times(6, 'Ok');
    attempt('Transient'); // 2 in 18
    expect(breaker.state).toBe('closed');
    attempt('Ok');
    attempt('Transient'); // 3 in 20
    expect(breaker.state).toBe('open');
  });

  it('is not armed until the baseline holds 100 outcomes', async () => {
    const { breaker, attempt, times } = await armed({}, 99);
    expect(breaker.snapshot().errorBaselineWarm).toBe(false);
    times(10, 'Ok');
    for (let i = 0; i < 4; i++) {
      attempt('Transient');
      attempt('Ok');
    }
    expect(breaker.snapshot().tripWindowFailures).toBe(4);
    expect(breaker.state).toBe('closed');
  });

  it('compares with the 5 minutes before the trip window: a baseline 30 s old is still counted, 330 s old is gone', async () => {
    const { breaker, clock } = await armed();
    expect(breaker.snapshot().errorBaselineCalls).toBe(100);
    await clock.advance(299_000);
    expect(breaker.snapshot().errorBaselineCalls).toBe(100);
    await clock.advance(1000);
    expect(breaker.snapshot().errorBaselineCalls).toBe(0);
  });
});

describe('CircuitBreaker: slow calls', () => {
  /** 20 successes of 100 ms at t=0, warm from t=40 s (their 10 s slot must be older than the trip window). */
  async function warm(settings: BreakerSettings = {}) {
    const s = setup(settings);
    s.times(20, 'Ok', 100);
    await s.clock.advance(39_999);
    expect(s.breaker.snapshot().latencyBaselineWarm).toBe(false);
    await s.clock.advance(1);
    const snapshot = s.breaker.snapshot();
    expect(snapshot.latencyBaselineWarm).toBe(true);
    expect(snapshot.latencyMedian).toBe(100);
    return s;
  }

  it('trips when half the trip window (at least 20 attempts) is slower than 3 × the median', async () => {
    const { breaker, times, attempt } = await warm();
    times(10, 'Ok', 100);
    times(9, 'Ok', 301);
    times(5, 'Ok', 300); // exactly 3 × is not slow
    expect(breaker.snapshot().tripWindowSlow).toBe(9);
    expect(breaker.state).toBe('closed');
    times(2, 'Ok', 301); // 11 slow of 26: under half
    expect(breaker.state).toBe('closed');
    attempt('Ok', 301); // 12 of 27
    expect(breaker.state).toBe('closed');
    attempt('Ok', 301); // 13 of 28
    expect(breaker.state).toBe('closed');
    attempt('Ok', 301); // 14 of 29
    expect(breaker.state).toBe('closed');
    attempt('Ok', 301); // 15 of 30 = half
    expect(breaker.state).toBe('open');
  });

  it('needs 20 attempts: 19 slow attempts do not trip, the 20th does', async () => {
    const { breaker, times, attempt } = await warm({ consecutiveFailures: 0 });
    times(19, 'Transient', 10_000); // slow too
    expect(breaker.state).toBe('closed');
    attempt('Ok', 10_000);
    expect(breaker.state).toBe('open');
  });

  it('does nothing while the latency baseline is cold', async () => {
    const { breaker, times } = setup();
    times(19, 'Ok', 100);
    times(40, 'Ok', 10_000);
    expect(breaker.state).toBe('closed');
  });

  it('a slow successful probe re-opens (the baseline remembers pre-brownout latency)', async () => {
    const { breaker, clock, attempt } = await warm();
    trip(attempt);
    await clock.advance(15_000);
    expect(attempt('Ok', 301)).toBe(Admission.Probe);
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfter()).toBe(30_000);
  });

  it('only successful attempts feed the latency baseline', async () => {
    const { breaker, clock, times } = setup({ consecutiveFailures: 0 });
    times(19, 'Ok', 100);
    times(30, 'Transient', 100);
    times(30, 'Throttled', 100);
    await clock.advance(40_000);
    expect(breaker.snapshot().latencyBaselineWarm).toBe(false);
  });
});

describe('CircuitBreaker: baselines survive', () => {
  it('open, close and reset keep both baselines', async () => {
    const { breaker, clock, attempt, times } = setup();
    times(100, 'Ok', 100);
    await clock.advance(40_000);
    const before = breaker.snapshot();
    expect([before.errorBaselineWarm, before.latencyBaselineWarm, before.latencyMedian]).toEqual([
      true,
      true,
      100,
    ]);
    trip(attempt);
    await clock.advance(15_000);
    attempt('Ok', 100);
    attempt('Ok', 100);
    expect(breaker.state).toBe('closed');
    breaker.reset();
    const after = breaker.snapshot();
    expect([after.errorBaselineWarm, after.latencyBaselineWarm, after.latencyMedian]).toEqual([
      true,
      true,
      100,
    ]);
    expect(after.errorBaselineCalls).toBe(100);
  });

  it('opening forgets the trip window, so the evidence that opened it does not re-trip it', async () => {
    const { breaker, clock, attempt, times } = setup();
    times(100, 'Ok');
    await clock.advance(30_000);
    trip(attempt);
    expect(breaker.snapshot().tripWindowCalls).toBe(0);
    await clock.advance(15_000);
    attempt('Ok');
    attempt('Ok');
    times(17, 'Ok');
    attempt('Transient'); // 1 failure in 20: the 5 earlier ones are gone
    expect(breaker.state).toBe('closed');
  });

  it('an attempt admitted before the breaker opened that settles while open is not counted', () => {
    const { breaker, times } = setup();
    const early = breaker.admit();
    times(5, 'Transient');
    breaker.record(early, 'Transient', 10);
    expect(breaker.snapshot().tripWindowCalls).toBe(0);
    expect(breaker.state).toBe('open');
  });
});

describe('CircuitBreaker: manual control', () => {
  it('isolate() holds it open until released, then probes; releasing twice does nothing', async () => {
    const { breaker, clock, transitions } = setup();
    const release = breaker.isolate();
    expect(breaker.state).toBe('isolated');
    expect(breaker.admit()).toBe(Admission.Refused);
    expect(breaker.retryAfter()).toBe(15_000);
    await clock.advance(600_000);
    expect(breaker.admit()).toBe(Admission.Refused);
    release();
    expect(breaker.state).toBe('halfOpen');
    release();
    expect(breaker.state).toBe('halfOpen');
    expect(transitions).toEqual(['closed->isolated 0', 'isolated->halfOpen 0']);
  });

  it('nested isolations end with the last release; a break still running resumes', async () => {
    const { breaker, clock, attempt } = setup();
    trip(attempt);
    const first = breaker.isolate();
    const second = breaker.isolate();
    await clock.advance(5000);
    expect(breaker.retryAfter()).toBe(15_000); // 10 s of break left, reported as at least one base break
    first();
    expect(breaker.state).toBe('isolated');
    second();
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfter()).toBe(10_000);
  });

  it('reset() closes, clears the doubling and ends any isolation', async () => {
    const { breaker, clock, attempt } = setup();
    trip(attempt);
    await clock.advance(15_000);
    attempt('Transient');
    expect(breaker.retryAfter()).toBe(30_000);
    const release = breaker.isolate();
    breaker.reset();
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().consecutiveOpens).toBe(0);
    release();
    expect(breaker.state).toBe('closed');
    trip(attempt);
    expect(breaker.retryAfter()).toBe(15_000);
  });

  it('retryAfter is the break actually served, counting down', async () => {
    const { breaker, clock, attempt } = setup({ jitter: 'equal' }, () => 0.5);
    trip(attempt);
    expect(breaker.retryAfter()).toBe(11_250);
    await clock.advance(1250);
    expect(breaker.retryAfter()).toBe(10_000);
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      breakMs: 11_250,
      breakRemaining: 10_000,
    });
  });

  it('a throwing transition listener cannot corrupt the breaker', () => {
    const clock = new FakeClock();
    const seen: BreakerState[] = [];
    const breaker = new CircuitBreaker(
      {},
      {
        clock,
        random: () => 0,
        onTransition: (_from, to) => {
          seen.push(to);
          throw new Error('listener bug');
        },
      },
    );
    for (let i = 0; i < 5; i++) breaker.record(breaker.admit(), 'Transient', 1);
    expect(breaker.state).toBe('open');
    expect(seen).toEqual(['open']);
  });
});

describe('CircuitBreaker: recovering', () => {
  function recovering(randoms: number[]) {
    let next = 0;
    const s = setup({ recovery: true }, () => randoms[next++ % randoms.length]!);
    return s;
  }

  async function toRecovering(s: ReturnType<typeof recovering>) {
    trip(s.attempt);
    await s.clock.advance(15_000);
    s.attempt('Ok');
    s.attempt('Ok');
    expect(s.breaker.state).toBe('recovering');
  }

  it('starts at 5 % and admits by random()', async () => {
    const s = recovering([0.049, 0.05]);
    await toRecovering(s);
    expect(s.breaker.snapshot().admittedFraction).toBe(0.05);
    expect(s.breaker.admit()).toBe(Admission.Recovering);
    expect(s.breaker.admit()).toBe(Admission.Refused);
    expect(s.breaker.retryAfter()).toBe(0);
  });

  it('admits the lower of a clock ramp over 0.25 × the break served and the AIMD estimate', async () => {
    const s = recovering([0]);
    await toRecovering(s);
    await s.clock.advance(1875); // half of 0.25 × 15 s
    expect(s.breaker.snapshot().admittedFraction).toBe(0.05); // AIMD still at 5 %
    for (let i = 0; i < 9; i++) s.attempt('Ok');
    expect(s.breaker.snapshot().admittedFraction).toBeCloseTo(0.5, 10); // AIMD 0.5 < clock 0.525
    for (let i = 0; i < 2; i++) s.attempt('Ok');
    expect(s.breaker.snapshot().admittedFraction).toBeCloseTo(0.525, 10); // clock 0.525 < AIMD 0.6
  });

  it('closes when the ramp reaches 100 %', async () => {
    const s = recovering([0]);
    await toRecovering(s);
    for (let i = 0; i < 19; i++) s.attempt('Ok');
    await s.clock.advance(3749);
    expect(s.breaker.state).toBe('recovering');
    await s.clock.advance(1);
    expect(s.breaker.state).toBe('closed');
    expect(s.transitions.slice(-2)).toEqual([
      'halfOpen->recovering 15000',
      'recovering->closed 15000',
    ]);
    trip(s.attempt);
    expect(s.breaker.retryAfter()).toBe(15_000);
  });

  it('a slow success halves the AIMD estimate', async () => {
    const s = recovering([0]);
    s.times(20, 'Ok', 100);
    await s.clock.advance(40_000);
    await toRecovering(s);
    for (let i = 0; i < 5; i++) s.attempt('Ok', 100);
    await s.clock.advance(3750);
    expect(s.breaker.snapshot().admittedFraction).toBeCloseTo(0.3, 10);
    s.attempt('Ok', 301);
    expect(s.breaker.snapshot().admittedFraction).toBeCloseTo(0.15, 10);
  });

  it('one Transient re-opens with the grown break', async () => {
    const s = recovering([0]);
    await toRecovering(s);
    s.attempt('Ok');
    expect(s.attempt('Transient')).toBe(Admission.Recovering);
    expect(s.breaker.state).toBe('open');
    expect(s.breaker.retryAfter()).toBe(30_000);
  });

  it('Throttled and Permanent do not move the ramp', async () => {
    const s = recovering([0]);
    await toRecovering(s);
    s.attempt('Throttled');
    s.attempt('Permanent');
    s.attempt('Limited');
    expect(s.breaker.snapshot().admittedFraction).toBe(0.05);
    expect(s.breaker.state).toBe('recovering');
  });
});

describe('CircuitBreaker: time', () => {
  it('reads only its clock: a wall-clock jump changes nothing', async () => {
    const dateNow = jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2031, 0, 1));
    const perfNow = jest.spyOn(performance, 'now');
    try {
      const { breaker, clock, attempt } = setup({}, () => 0.5, 1_000_000);
      trip(attempt);
      dateNow.mockReturnValue(Date.UTC(1999, 0, 1));
      expect(breaker.retryAfter()).toBe(15_000);
      dateNow.mockReturnValue(Date.UTC(2040, 0, 1));
      expect(breaker.state).toBe('open');
      await clock.advance(15_000);
      expect(breaker.state).toBe('halfOpen');
      expect(dateNow).not.toHaveBeenCalled();
      expect(perfNow).not.toHaveBeenCalled();
    } finally {
      dateNow.mockRestore();
      perfNow.mockRestore();
    }
  });
});

describe('CircuitBreaker: reconfigure', () => {
  it('keeps state and baselines, adopts new thresholds', async () => {
    const { breaker, clock, attempt, times } = setup();
    times(20, 'Ok', 100);
    await clock.advance(40_000);
    times(3, 'Transient');
    breaker.reconfigure({ consecutiveFailures: 4, breakDuration: 1000, jitter: 'none' });
    expect(breaker.snapshot().latencyMedian).toBe(100);
    attempt('Transient');
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfter()).toBe(1000);
  });

  it('rejects bad settings and leaves the breaker unchanged', () => {
    const { breaker } = setup();
    expect(() => breaker.reconfigure({ closeAfter: 0 })).toThrow(
      'breaker.closeAfter: 0 is invalid: must be an integer >= 1',
    );
    expect(breaker.settings.closeAfter).toBe(2);
  });
});
