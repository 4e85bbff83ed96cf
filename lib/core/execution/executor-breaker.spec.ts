import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { SEED_BREAKER_SETTINGS } from '../breaker/breaker-settings.js';
import { Classifier } from '../classification/classifier.js';
import { CallRejectedError } from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';

class Down extends Error {
  override name = 'Down';
}

function setup() {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({
      name: 'payments',
      clock,
      random: () => 0.5,
      budget: RetryBudget.none,
      backoff: Backoff.none,
      breaker: Breaker.with({ ...SEED_BREAKER_SETTINGS, jitter: 'none' }),
    })
    .withListener((e) => events.push(e));
  let calls = 0;
  let healthy = false;
  const work = () => {
    calls++;
    return healthy ? Promise.resolve('ok') : Promise.reject(new Down('down'));
  };
  return {
    clock,
    events,
    policy,
    work,
    get calls() {
      return calls;
    },
    heal: () => (healthy = true),
  };
}

/** Opens the breaker: two calls of 3 attempts, the fifth failure trips it (the second call is refused at 100 ms). */
async function trip(t: ReturnType<typeof setup>): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const call = t.policy.tryRun(t.work);
    await t.clock.runAll();
    await call;
  }
}

describe('executor with a circuit breaker', () => {
  it('samples attempts: the attempt that trips it stops the next attempt of the same call', async () => {
    const t = setup();
    const first = t.policy.tryRun(t.work);
    await t.clock.runAll();
    expect((await first).attempts).toHaveLength(3);
    t.events.length = 0;
    const second = t.policy.tryRun(t.work);
    await t.clock.advance(100);
    const result = await second;
    expect(t.calls).toBe(5);
    expect(result.attempts).toHaveLength(2);
    expect(result.reason).toBe('dependencyUnavailable');
    const error = result.error as CallRejectedError;
    expect([error.reason, error.retryAfter]).toEqual(['DependencyUnavailable', 14_900]);
    expect(t.events.map((e) => e.kind)).toEqual([
      'attempt',
      'retrying',
      'attempt',
      'breakerOpened',
      'rejected',
    ]);
    expect(String(t.events[4])).toBe(
      '[payments] Rejected #2 Transient (100ms) dependencyUnavailable CallRejectedError',
    );
    expect(t.events[3]!.delay).toBe(15_000);
    expect(t.policy.breaker()!.state).toBe('open');
  });

  it('refuses first attempts while open, after the guarded pause, with the break left', async () => {
    const t = setup();
    await trip(t);
    // Opened at 0 by the fifth failure; the second call's refusal paused until 100.
    expect(t.clock.now()).toBe(100);
    await t.clock.advance(4_000);
    const refused = t.policy.tryRun(t.work);
    await t.clock.advance(100);
    const result = await refused;
    expect([t.calls, result.attempts.length, result.reason]).toEqual([
      5,
      0,
      'dependencyUnavailable',
    ]);
    expect((result.error as CallRejectedError).retryAfter).toBe(15_000 - 4_200);
  });

  it('half-opens after the break, closes after two good probes', async () => {
    const t = setup();
    await trip(t);
    expect(t.policy.breaker()!.state).toBe('open');
    t.heal();
    t.events.length = 0;
    await t.clock.advance(15_000);
    expect((await t.policy.tryRun(t.work)).ok).toBe(true);
    expect((await t.policy.tryRun(t.work)).ok).toBe(true);
    expect(t.events.map((e) => e.kind)).toEqual([
      'breakerHalfOpened',
      'attempt',
      'succeeded',
      'attempt',
      'breakerClosed',
      'succeeded',
    ]);
    expect(t.calls).toBe(7);
  });

  it('returns the probe slot when the caller aborts the probe', async () => {
    const t = setup();
    await trip(t);
    await t.clock.advance(15_000);
    const controller = new AbortController();
    const aborted = await t.policy.tryRun(
      (ctx) => {
        const p = new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
        controller.abort(new Error('left'));
        return p;
      },
      { signal: controller.signal },
    );
    expect(aborted.reason).toBe('cancelled');
    t.heal();
    const probe = await t.policy.tryRun(t.work);
    expect([probe.ok, probe.attempts.length]).toEqual([true, 1]);
  });

  it('a breaker refusal is aborted at once by the caller', async () => {
    const t = setup();
    await trip(t);
    const controller = new AbortController();
    const call = t.policy.tryRun(t.work, { signal: controller.signal });
    await t.clock.advance(10);
    expect(t.clock.pending).toBe(1);
    controller.abort(new Error('bye'));
    const result = await call;
    expect([result.reason, (result.error as Error).message, t.clock.now()]).toEqual([
      'cancelled',
      'bye',
      110,
    ]);
    expect(t.clock.pending).toBe(0);
  });

  it('Resilience.http carries a breaker, Resilience.default none', () => {
    expect(Resilience.http.options.breaker).toBe(Breaker.default);
    expect(Resilience.default.breaker()).toBeUndefined();
    expect(() => Resilience.default.with({ breaker: true as never })).toThrow(
      'breaker: true is invalid: must be a Breaker',
    );
  });
});

describe('half-open refusals', () => {
  it('a call refused while the probe slot is taken gets a hint: the break last served (15 s), the probe timeout left being longer', async () => {
    const t = setup();
    await trip(t);
    await t.clock.advance(15_000);
    let release!: () => void;
    const probe = t.policy.tryRun(
      () => new Promise<string>((resolve) => (release = () => resolve('ok'))),
    );
    const refused = t.policy.tryRun(t.work);
    await t.clock.advance(100);
    const error = (await refused).error as CallRejectedError;
    expect([error.reason, error.retryAfter]).toEqual(['DependencyUnavailable', 15_000]);
    release();
    expect((await probe).ok).toBe(true);
  });
});

describe('probe slot and classifier bugs', () => {
  it('a probe whose classifier throws still returns the slot', async () => {
    const clock = new FakeClock();
    const shared = Resilience.default.with({
      clock,
      budget: RetryBudget.none,
      attempts: 1,
      breaker: Breaker.with({ ...SEED_BREAKER_SETTINGS, jitter: 'none' }),
    });
    const instance = shared.breaker()!;
    for (let i = 0; i < 5; i++) await shared.tryRun(() => Promise.reject(new Down('down')));
    await clock.advance(15_000);
    const buggy = shared.with({
      breaker: Breaker.using(instance),
      classifier: Classifier.of(() => {
        throw new Error('rule bug');
      }),
    });
    expect((await buggy.tryRun(() => 'ok')).reason).toBe('permanent');
    expect(instance.snapshot().probesInFlight).toBe(0);
  });
});

describe('budget and breaker together', () => {
  it('a retry the breaker refuses gives its budget token back', async () => {
    const clock = new FakeClock();
    const budget = RetryBudget.of({ minimumPerSecond: 0 });
    const retrying = Resilience.default.with({
      clock,
      budget,
      attempts: 2,
      backoff: Backoff.constant(20_000),
      breaker: Breaker.with({ ...SEED_BREAKER_SETTINGS, jitter: 'none' }),
    });
    const breaker = retrying.breaker()!;
    const others = retrying.with({
      budget: RetryBudget.none,
      attempts: 1,
      breaker: Breaker.using(breaker),
    });
    const bucket = retrying.bucket()!;
    const call = retrying.tryRun(() => Promise.reject(new Down('down')));
    await clock.advance(0);
    expect(bucket.level).toBe(9);
    for (let i = 0; i < 4; i++) await others.tryRun(() => Promise.reject(new Down('down')));
    expect(breaker.state).toBe('open');
    await clock.advance(15_000);
    void others.tryRun(() => new Promise(() => undefined));
    await clock.advance(5_100);
    const result = await call;
    expect([result.reason, result.attempts.length, bucket.level]).toEqual([
      'dependencyUnavailable',
      1,
      10,
    ]);
  });
});

describe('the retry-after hint of a breaker refusal', () => {
  /** Five failed one-attempt calls trip a seed-numbers breaker (15 s break, no jitter) with a 5 s probe timeout. */
  async function halfOpenWithProbeOut() {
    const clock = new FakeClock();
    const breaker = Breaker.with({ ...SEED_BREAKER_SETTINGS, jitter: 'none', probeTimeout: 5000 });
    const policy = Resilience.default.with({
      clock,
      random: () => 0.5,
      attempts: 1,
      budget: RetryBudget.none,
      backoff: Backoff.none,
      breaker,
    });
    for (let i = 0; i < 5; i++) await policy.tryRun(() => Promise.reject(new Down('down')));
    const refusedWhileOpen = policy.tryRun(() => 'never');
    await clock.advance(100);
    const open = (await refusedWhileOpen).error as CallRejectedError;
    await clock.advance(15_000 - 100);
    let settle!: (outcome: 'ok' | 'down') => void;
    const probe = policy.tryRun(
      () =>
        new Promise<string>(
          (resolve, reject) =>
            (settle = (o) => (o === 'ok' ? resolve('ok') : reject(new Down('down')))),
        ),
    );
    return { clock, policy, open, probe, settle: (o: 'ok' | 'down') => settle(o) };
  }

  async function refusal(
    t: { clock: FakeClock; policy: ReturnType<typeof Resilience.default.with> },
    during?: () => void,
  ): Promise<CallRejectedError> {
    const call = t.policy.tryRun(() => 'admitted');
    during?.();
    await t.clock.advance(100); // the guarded pause
    const result = await call;
    expect(result.reason).toBe('dependencyUnavailable');
    return result.error as CallRejectedError;
  }

  it('open: the break left after the guarded pause', async () => {
    const t = await halfOpenWithProbeOut();
    expect([t.open.reason, t.open.retryAfter]).toEqual(['DependencyUnavailable', 14_900]);
  });

  it('half-open with the probe out: until its verdict is due at the latest (the probe timeout left), capped at the break last served', async () => {
    const t = await halfOpenWithProbeOut();
    expect((await refusal(t)).retryAfter).toBe(4900);
    await t.clock.advance(2900);
    expect((await refusal(t)).retryAfter).toBe(1900);
    // The probe fails: the breaker re-opens with the doubled break, and refusals carry it.
    t.settle('down');
    expect((await t.probe).reason).toBe('attemptsExhausted');
    expect((await refusal(t)).retryAfter).toBe(29_900);
  });

  it('capped at the break served: a probe timeout longer than the break never asks for more than the break', async () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({
      clock,
      random: () => 0.5,
      attempts: 1,
      budget: RetryBudget.none,
      backoff: Backoff.none,
      breaker: Breaker.with({ ...SEED_BREAKER_SETTINGS, jitter: 'none' }),
    });
    for (let i = 0; i < 5; i++) await policy.tryRun(() => Promise.reject(new Down('down')));
    await clock.advance(15_000);
    void policy.tryRun(() => new Promise(() => undefined)); // a probe that never settles (30 s probe timeout)
    expect((await refusal({ clock, policy })).retryAfter).toBe(15_000);
  });

  it('a slot that came back during the guarded pause: the smallest hint, 1 ms (the filter says 1 s)', async () => {
    const t = await halfOpenWithProbeOut();
    // The probe succeeds while the refused call waits out its pause: one good probe of two, the slot is free.
    const error = await refusal(t, () => t.settle('ok'));
    expect((await t.probe).ok).toBe(true);
    expect(error.retryAfter).toBe(1);
  });
});
