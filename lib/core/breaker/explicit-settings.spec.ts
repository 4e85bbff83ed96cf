import { Admission } from './breaker-state.js';
import { Breaker } from './breaker-value.js';
import { CircuitBreaker } from './circuit-breaker.js';
import {
  BREAKER_DEFAULTS,
  type BreakerSettings,
  validateBreakerSettings,
} from './breaker-settings.js';
import { FakeClock } from '../time/fake-clock.js';
import { CallRejectedError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';

// DESIGN §3.6: a number the user sets means what it says; the measured defaults apply where none is set.

/** A breaker on a fake clock; `history` feeds it a flaky dependency, `untilOpen` counts failures until it opens. */
function setup(settings: BreakerSettings) {
  const clock = new FakeClock();
  const opens: number[] = [];
  const breaker = new CircuitBreaker(settings, {
    clock,
    random: () => 0.5,
    onTransition: (_from, to, ms) => to === 'open' && opens.push(ms),
  });
  const attempt = (verdict: 'Ok' | 'Transient'): Admission => {
    const admission = breaker.admit();
    if (admission !== Admission.Refused) breaker.record(admission, verdict, 0);
    return admission;
  };
  /** 100 attempts failing 40 % (Transient, Transient, Ok, Ok, Ok, …, ending Ok): a flaky dependency that is not tripped. */
  const flaky = () => {
    for (let i = 0; i < 100; i++) attempt(i % 5 < 2 ? 'Transient' : 'Ok');
    expect(breaker.state).toBe('closed');
  };
  /** Transient attempts until the breaker opens (at most 200): how many it took. */
  const untilOpen = (): number => {
    for (let n = 1; n <= 200; n++) {
      attempt('Transient');
      if (breaker.state === 'open') return n;
    }
    return Infinity;
  };
  return { clock, breaker, opens, attempt, flaky, untilOpen };
}

describe('an explicit consecutiveFailures is the rule', () => {
  it('consecutiveFailures: 5 opens on the 5th Transient in a row after a 40 % flaky history; unset, the measured streak needs 21', () => {
    const explicit = setup({ consecutiveFailures: 5 });
    explicit.flaky();
    expect(explicit.untilOpen()).toBe(5);
    const measured = setup({});
    measured.flaky();
    expect(measured.untilOpen()).toBe(21);
  });

  it('streakSignificance beside it keeps the measured streak (5 is then the shortest run): 21 again', () => {
    const { flaky, untilOpen } = setup({ consecutiveFailures: 5, streakSignificance: 1e-8 });
    flaky();
    expect(untilOpen()).toBe(21);
  });

  it('an explicit failureRateFloor beside it still holds the floor: the run of 5 trips once half the last 100 failed (the 18th)', () => {
    const { flaky, untilOpen } = setup({ consecutiveFailures: 5, failureRateFloor: 0.5 });
    flaky();
    // n more failures drop the n oldest outcomes, 8 of them failures at n = 18: 40 − 8 + 18 = 50 of 100.
    expect(untilOpen()).toBe(18);
  });

  it('resolves to what it does: streakSignificance 1 and failureRateFloor 0 unless given; the defaults are untouched', () => {
    const pick = (s: BreakerSettings) => {
      const r = validateBreakerSettings(s);
      return [r.consecutiveFailures, r.streakSignificance, r.failureRateFloor];
    };
    expect(pick({})).toEqual([5, 1e-8, 0.5]);
    expect(pick({ consecutiveFailures: 5 })).toEqual([5, 1, 0]);
    expect(pick({ consecutiveFailures: 8, failureRateFloor: 0.3 })).toEqual([8, 1, 0.3]);
    expect(pick({ consecutiveFailures: 8, streakSignificance: 1e-6 })).toEqual([8, 1e-6, 0.5]);
    expect(pick({ breakDuration: 2000 })).toEqual([5, 1e-8, 0.5]);
    expect([BREAKER_DEFAULTS.streakSignificance, BREAKER_DEFAULTS.failureRateFloor]).toEqual([
      1e-8, 0.5,
    ]);
  });

  it('Breaker.with() keeps what was written through derivations: an explicit run stays literal, a later streakSignificance makes it measured', () => {
    const settings = (b: Breaker) => [
      b.settings.consecutiveFailures,
      b.settings.streakSignificance,
      b.settings.failureRateFloor,
    ];
    expect(settings(Breaker.with({ jitter: 'none' }).with({ consecutiveFailures: 5 }))).toEqual([
      5, 1, 0,
    ]);
    expect(
      settings(Breaker.with({ consecutiveFailures: 5 }).with({ breakDuration: 2000 })),
    ).toEqual([5, 1, 0]);
    expect(
      settings(Breaker.with({ consecutiveFailures: 5 }).with({ streakSignificance: 1e-8 })),
    ).toEqual([5, 1e-8, 0.5]);
    expect(settings(Breaker.with({ breakDuration: 2000 }))).toEqual([5, 1e-8, 0.5]);
    // The conservative preset's 20 is the shortest measured run, as it was.
    expect(settings(Breaker.using(Resilience.conservative.breaker()!))).toEqual([20, 1e-8, 0.5]);
  });

  it('through a policy on a FakeClock: after a flaky stretch, the 6th call to a dead dependency is refused', async () => {
    const clock = new FakeClock();
    const policy = Resilience.http.with({
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      breaker: Breaker.with({ consecutiveFailures: 5 }),
    });
    let n = 0;
    const flaky = () => (n++ % 5 < 2 ? Promise.reject(new Error('502')) : Promise.resolve('ok'));
    for (let i = 0; i < 100; i++) await policy.run(flaky).catch(() => undefined);
    let calls = 0;
    const dead = () => (calls++, Promise.reject(new Error('down')));
    for (let i = 0; i < 5; i++) await expect(policy.run(dead)).rejects.toThrow('down');
    const refused = expect(policy.run(dead)).rejects.toBeInstanceOf(CallRejectedError);
    await clock.advance(100); // the guarded pause before a refusal
    await refused;
    expect(calls).toBe(5);
  });
});

describe('breaks: an explicit maximumBreak above breakDuration doubles them', () => {
  it('maximumBreak: 8000 over the 1 s default: breaks of 1, 2, 4, 8, 8 s (no jitter)', async () => {
    const { clock, opens, attempt } = setup({
      consecutiveFailures: 1,
      maximumBreak: 8000,
      jitter: 'none',
    });
    attempt('Transient');
    for (const served of [1000, 2000, 4000, 8000]) {
      await clock.advance(served);
      expect(attempt('Transient')).toBe(Admission.Probe); // the probe fails: open again, for twice as long
    }
    expect(opens).toEqual([1000, 2000, 4000, 8000, 8000]);
  });

  it('unset, breaks stay at 1 s', async () => {
    const { clock, opens, attempt } = setup({ consecutiveFailures: 1, jitter: 'none' });
    attempt('Transient');
    for (let k = 0; k < 3; k++) {
      await clock.advance(1000);
      attempt('Transient');
    }
    expect(opens).toEqual([1000, 1000, 1000, 1000]);
  });
});

describe('reset() clears the recent outcomes, as documented', () => {
  it('after a flaky stretch and a reset, a dead dependency trips on the 5th failure, as at a cold start', () => {
    const { breaker, flaky, untilOpen } = setup({});
    flaky();
    breaker.reset();
    expect(untilOpen()).toBe(5);
  });

  it('without the reset the same history needs 21', () => {
    const { flaky, untilOpen } = setup({});
    flaky();
    expect(untilOpen()).toBe(21);
  });
});
