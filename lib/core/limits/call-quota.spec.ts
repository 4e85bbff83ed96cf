import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { Hedge } from '../hedging/hedge-value.js';
import { SEED_BREAKER_SETTINGS } from '../breaker/breaker-settings.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { CallRejectedError, PolicyConfigError } from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import { Resilience } from '../policy/policy.js';
import type { CallResult } from '../execution/call-result.js';
import { FakeClock } from '../time/fake-clock.js';
import type { CallQuota } from './call-quota.js';
import { Limit } from './limit-value.js';

class Down extends Error {
  override name = 'Down';
}

/** A quota that refuses until `resetAt` (a clock reading) once `refusing` is set, and counts what it admits. */
function quotaOn() {
  const quota = {
    refusing: false,
    resetAt: 0,
    spent: 0,
    refusal(now: number): number | undefined {
      return quota.refusing && now < quota.resetAt ? quota.resetAt - now : undefined;
    },
    spend(): void {
      quota.spent++;
    },
  };
  return quota;
}

function setup(extra: Parameters<typeof Resilience.default.with>[0] = {}) {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({
      name: 'prices',
      clock,
      random: () => 0.5,
      backoff: Backoff.none,
      budget: RetryBudget.none,
      ...extra,
    })
    .withListener((e) => events.push(e));
  return { clock, events, policy, quota: quotaOn() };
}

/** What a caller sees of a refusal: when it came (ms after the call), the error, the stop reason, work started. */
async function refusalSeen(
  clock: FakeClock,
  run: () => Promise<CallResult<unknown>>,
  started: () => number,
): Promise<unknown[]> {
  const begun = clock.now();
  let settledAt: number | undefined;
  const pending = run().then((result) => {
    settledAt = clock.now() - begun;
    return result;
  });
  await clock.advance(500);
  const result = await pending;
  const error = result.error as CallRejectedError;
  return [settledAt, error.name, error.retryAfter, result.reason, started()];
}

describe('a caller quota (RunOptions.quota) refuses in admit, on the executor’s one refusal path', () => {
  it('refuses as a full bulkhead does: after the 100 ms guarded pause, CallRejectedError, stop reason limited, work never started', async () => {
    // The quota: its window resets 5 s from now.
    const byQuota = setup();
    byQuota.quota.refusing = true;
    byQuota.quota.resetAt = 5_000;
    let quotaStarted = 0;
    const quotaRefusal = await refusalSeen(
      byQuota.clock,
      () => byQuota.policy.tryRun(() => ++quotaStarted, { quota: byQuota.quota }),
      () => quotaStarted,
    );
    // The bulkhead: one slot, held (a slot came back after 5 s once, so its hint is 5 s).
    const byLimit = setup({ limit: Limit.concurrency(1) });
    let release!: () => void;
    const held = () => new Promise<void>((resolve) => (release = resolve));
    const first = byLimit.policy.run(held);
    await byLimit.clock.advance(5_000);
    release();
    await first;
    void byLimit.policy.run(held);
    let limitStarted = 0;
    const limitRefusal = await refusalSeen(
      byLimit.clock,
      () => byLimit.policy.tryRun(() => ++limitStarted),
      () => limitStarted,
    );
    expect(quotaRefusal).toEqual([100, 'CallRejectedError', 4_900, 'limited', 0]);
    expect(limitRefusal).toEqual([100, 'CallRejectedError', 5_000, 'limited', 0]);
    expect(byQuota.quota.spent).toBe(0);
  });

  it('says QuotaExhausted with the wait read after the pause, a rejectedByQuota event, then the one terminal rejected event', async () => {
    const { clock, events, policy, quota } = setup();
    quota.refusing = true;
    quota.resetAt = 30_000;
    let started = 0;
    const call = policy.run(() => ++started, { quota }).catch((e: unknown) => e);
    await clock.advance(100);
    const error = (await call) as CallRejectedError;
    expect([error.reason, error.retryAfter, error.message, started]).toEqual([
      'QuotaExhausted',
      29_900,
      '[prices] call rejected: QuotaExhausted (retry after 29900ms)',
      0,
    ]);
    expect(events.map((e) => [e.kind, e.attempt, e.verdict, e.reason, e.delay])).toEqual([
      ['rejectedByQuota', 1, 'Limited', undefined, 29_900],
      ['rejected', 0, undefined, 'limited', 0],
    ]);
  });

  it('a window that resets during the pause: the refusal stands, asking again at once (1 ms)', async () => {
    const { clock, policy, quota } = setup();
    quota.refusing = true;
    quota.resetAt = 50;
    const call = policy.run(() => 'sent', { quota }).catch((e: unknown) => e);
    await clock.advance(100);
    expect(((await call) as CallRejectedError).retryAfter).toBe(1);
    expect(await policy.run(() => 'sent', { quota })).toBe('sent');
  });

  it('counts every admitted attempt (retries included) and refuses a retry before its work, giving its budget token back', async () => {
    const { clock, policy, quota } = setup({
      attempts: 3,
      budget: RetryBudget.tokenBucket({ fraction: 0, minimumPerSecond: 0 }),
    });
    let started = 0;
    expect(
      await policy.run(
        () => {
          if (++started < 3) throw new Down();
          return 'third';
        },
        { quota },
      ),
    ).toBe('third');
    expect(quota.spent).toBe(3);
    // No deposits, no floor: 10 tokens, two spent on the retries above.
    const bucket = policy.bucket()!;
    expect(bucket.level).toBe(8);
    started = 0;
    const down = new Down();
    const call = policy.tryRun(
      () => {
        started++;
        // The dependency publishes that the quota is spent with its first answer.
        quota.refusing = true;
        quota.resetAt = clock.now() + 2_000;
        throw down;
      },
      { quota },
    );
    await clock.advance(100);
    const result = await call;
    const error = result.error as CallRejectedError;
    expect([started, result.reason, error.reason, error.retryAfter, error.cause]).toEqual([
      1,
      'limited',
      'QuotaExhausted',
      1_900,
      down,
    ]);
    expect(quota.spent).toBe(4);
    expect(bucket.level).toBe(8);
  });

  it('is asked before the breaker: a refusal never takes a half-open probe nor counts as breaker evidence', async () => {
    const { clock, policy, quota } = setup({
      attempts: 1,
      breaker: Breaker.with({ ...SEED_BREAKER_SETTINGS, breakDuration: 1_000, jitter: 'none' }),
    });
    for (let i = 0; i < 5; i++)
      await policy.run(() => Promise.reject(new Down())).catch(() => undefined);
    const breaker = policy.breaker()!;
    expect(breaker.state).toBe('open');
    await clock.advance(1_000);
    quota.refusing = true;
    quota.resetAt = clock.now() + 500;
    const refused = policy.run(() => 'probe', { quota }).catch((e: unknown) => e);
    await clock.advance(100);
    expect(((await refused) as CallRejectedError).reason).toBe('QuotaExhausted');
    await clock.advance(400);
    // The probe slot is still free: the next call is admitted as the probe.
    expect(await policy.run(() => 'probe', { quota })).toBe('probe');
  });

  it('counts a hedge as an attempt, and starts none while the quota refuses', async () => {
    for (const refusing of [false, true]) {
      const { clock, policy, quota } = setup({ hedge: Hedge.at(0.95), repeatable: true });
      for (let i = 0; i < 20; i++) policy.hedger()!.latency.add(0, 100);
      const threshold = Math.ceil(policy.hedger()!.threshold(0)!);
      let started = 0;
      const answers: ((value: string) => void)[] = [];
      const call = policy.run(
        () =>
          new Promise<string>((resolve) => {
            started++;
            answers.push(resolve);
          }),
        { quota },
      );
      // The first attempt is admitted (and counted); the dependency then publishes its quota spent.
      quota.refusing = refusing;
      quota.resetAt = clock.now() + 60_000;
      await clock.advance(threshold);
      expect([refusing, started, quota.spent]).toEqual([
        refusing,
        refusing ? 1 : 2,
        refusing ? 1 : 2,
      ]);
      answers[0]!('first');
      expect(await call).toBe('first');
    }
  });

  it('the caller aborting during the pause ends the call as cancelled with the abort reason', async () => {
    const { clock, policy, quota } = setup();
    quota.refusing = true;
    quota.resetAt = 10_000;
    const controller = new AbortController();
    const call = policy.tryRun(() => 'x', { quota, signal: controller.signal });
    await clock.advance(40);
    controller.abort(new Error('gone'));
    const result = await call;
    expect([result.reason, (result.error as Error).message]).toEqual(['cancelled', 'gone']);
  });

  it('a quota without its two methods is refused before the call starts, naming the field and the rule', () => {
    const { policy } = setup();
    expect(() =>
      policy.run(() => 'x', { quota: { refusal: () => undefined } as unknown as CallQuota }),
    ).toThrow(PolicyConfigError);
    expect(() =>
      policy.run(() => 'x', { quota: { refusal: () => undefined } as unknown as CallQuota }),
    ).toThrow('must be { refusal(now), spend() } (a CallQuota)');
  });
});
