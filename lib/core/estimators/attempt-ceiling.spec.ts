import { Backoff } from '../backoff/backoff.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { AttemptTimeoutError, PolicyConfigError } from '../errors.js';
import { Hedge } from '../hedging/hedge-value.js';
import { type DelaySource, EventLoopProbe, Saturation } from '../limits/saturation.js';
import { type Policy, Resilience } from '../policy/policy.js';
import type { PolicyOptions } from '../policy/policy-options.js';
import { FakeClock } from '../time/fake-clock.js';
import { AttemptCeiling } from './attempt-ceiling.js';

/** Work answering after `ms` on the clock (`Infinity`: never, until its signal aborts). */
function after(clock: FakeClock, ms: () => number) {
  return ({ signal }: { signal: AbortSignal }) =>
    new Promise<string>((resolve, reject) => {
      const wait = ms();
      const timer = wait === Infinity ? undefined : clock.setTimer(wait, () => resolve('ok'));
      signal.addEventListener(
        'abort',
        () => {
          if (timer !== undefined) clock.clearTimer(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
}

function ceiled(extra: PolicyOptions = {}): { clock: FakeClock; policy: Policy } {
  const clock = new FakeClock();
  const policy = Resilience.default.with({
    name: 'prices',
    clock,
    random: () => 0.5,
    budget: RetryBudget.none,
    backoff: Backoff.none,
    deadline: 30_000,
    attemptCeiling: AttemptCeiling.default,
    ...extra,
  });
  return { clock, policy };
}

/** Runs one call whose attempts take `ms()` each; returns its result once the clock has run it out. */
async function call(clock: FakeClock, policy: Policy, ms: () => number) {
  const result = policy.tryRun(after(clock, ms));
  await clock.runAll();
  return result;
}

async function warm(clock: FakeClock, policy: Policy, ms = 10, count = 100): Promise<void> {
  for (let i = 0; i < count; i++) await call(clock, policy, () => ms);
}

describe('attemptCeiling', () => {
  it('is cold until 100 successes, then 3 × their p95 (10 ms successes: 30.8 ms, within one histogram bucket)', async () => {
    const { clock, policy } = ceiled();
    await warm(clock, policy, 10, 99);
    expect(policy.measured.attemptCeiling).toBeUndefined();
    expect(policy.explain().term('attemptCeiling')).toMatchObject({
      state: 'cold',
      reading: 'not armed (99 of 100 successes seen)',
    });
    await warm(clock, policy, 10, 1);
    const ceiling = policy.measured.attemptCeiling!;
    expect(ceiling).toBeGreaterThanOrEqual(30);
    expect(ceiling).toBeLessThan(30 * 1.044);
    expect(policy.explain().term('attemptCeiling')).toMatchObject({
      state: 'warm',
      reading: `ceiling ${Math.round(ceiling * 10) / 10} ms (0 % of recent attempts outlasted it)`,
    });
  });

  it('cuts an attempt that hangs at the ceiling and retries it: the call ends at ~41 ms, not at the 30 s deadline', async () => {
    const { clock, policy } = ceiled();
    await warm(clock, policy);
    const ceiling = policy.measured.attemptCeiling!;
    const started = clock.now();
    let attempt = 0;
    const result = await call(clock, policy, () => (++attempt === 1 ? Infinity : 10));
    expect(result.ok).toBe(true);
    expect(result.attempts.map((a) => a.verdict)).toEqual(['Transient', 'Ok']);
    expect(result.attempts[0]!.error).toBeInstanceOf(AttemptTimeoutError);
    expect((result.attempts[0]!.error as AttemptTimeoutError).timeout).toBe(ceiling);
    expect(clock.now() - started).toBeCloseTo(ceiling + 10, 6);
  });

  it('only ever tightens: a shorter attemptTimeout stays the bound, and a cold ceiling leaves the deadline', async () => {
    const { clock, policy } = ceiled({ attemptTimeout: 20, attempts: 1 });
    await warm(clock, policy);
    const cut = await call(clock, policy, () => Infinity);
    expect((cut.error as AttemptTimeoutError).timeout).toBe(20);
    const cold = ceiled({ attempts: 1 });
    const started = cold.clock.now();
    const held = await call(cold.clock, cold.policy, () => Infinity);
    expect(held.reason).toBe('deadlineExceeded');
    expect(cold.clock.now() - started).toBe(30_000);
  });

  it('stands aside after 17 cut attempts when the dependency slows for everyone, then serves at the new latency and comes back at 3 × it', async () => {
    const { clock, policy } = ceiled({ attempts: 1 });
    await warm(clock, policy);
    const outcomes: string[] = [];
    for (let i = 0; i < 18; i++)
      outcomes.push((await call(clock, policy, () => 100)).ok ? 'ok' : 'cut');
    // The share of recent attempts outlasting it (weight 0.01 each) passes 15 % on the 17th cut.
    expect(outcomes).toEqual([...Array<string>(17).fill('cut'), 'ok']);
    expect(policy.measured.attemptCeiling).toBeUndefined();
    expect(policy.explain().term('attemptCeiling')!.reading).toMatch(
      /^standing aside at 30\.\d ms: 16\.5 % of recent attempts outlasted it$/,
    );
    // Served at 100 ms meanwhile; once fewer than 5 % outlast the re-learnt ceiling, it is back.
    let served = 0;
    while (policy.measured.attemptCeiling === undefined && served < 500) {
      expect((await call(clock, policy, () => 100)).ok).toBe(true);
      served++;
    }
    // 109 calls for the share to decay below 5 % once nothing outlasts it; before that, calls outlast
    // the old ceiling until the new latency is more than 5 % of the window and the ceiling is worked
    // out again (once a second).
    expect(served).toBe(180);
    expect(policy.measured.attemptCeiling).toBeGreaterThanOrEqual(300);
    expect(policy.measured.attemptCeiling).toBeLessThan(300 * 1.044);
  });

  it('learns nothing while the event loop is saturated', async () => {
    const source: DelaySource & { max: number } = { max: 0, reset: () => void 0 };
    const { clock, policy } = ceiled();
    const probe = new EventLoopProbe(() => source, clock);
    const saturated = policy.with({ saturation: Saturation.above(5, probe) });
    probe.saturated(5);
    source.max = 2e6;
    await clock.advance(250);
    expect(saturated.measured.eventLoopDelay).toBe(2);
    source.max = 100e6;
    await clock.advance(250);
    expect(probe.saturated(5)).toBe(true);
    await warm(clock, saturated, 10, 25);
    expect(saturated.measurements()!.samples(clock.now())).toBe(0);
    expect(saturated.measured.attemptCeiling).toBeUndefined();
  });

  it('adaptive: false turns it off and refuses hedge and saturation, naming the field', async () => {
    const { clock, policy } = ceiled({ adaptive: false, attempts: 1 });
    await warm(clock, policy);
    expect(policy.measurements()).toBeUndefined();
    expect(policy.measured).toEqual({
      attemptCeiling: undefined,
      backoffBase: undefined,
      hedgeThreshold: undefined,
      eventLoopDelay: undefined,
    });
    expect(policy.explain().term('attemptCeiling')!.state).toBe('not configured');
    const started = clock.now();
    expect((await call(clock, policy, () => Infinity)).reason).toBe('deadlineExceeded');
    expect(clock.now() - started).toBe(30_000);
    expect(() => policy.with({ saturation: Saturation.above(5) })).toThrow(
      expect.objectContaining({ field: 'saturation' }) as PolicyConfigError,
    );
    expect(() => policy.with({ hedge: Hedge.at(0.95) })).toThrow(
      /^hedge: .*must be left out when adaptive is false/,
    );
    expect(() => AttemptCeiling.measured({ multiple: 0.5 })).toThrow(
      expect.objectContaining({
        field: 'attemptCeiling.multiple',
        value: 0.5,
      }) as PolicyConfigError,
    );
  });

  it('is on in Resilience.http (docs/measured.md), off in default and conservative', () => {
    expect(Resilience.http.options.attemptCeiling).toBe(AttemptCeiling.default);
    expect(Resilience.default.options.attemptCeiling).toBeUndefined();
    expect(Resilience.conservative.options.attemptCeiling).toBeUndefined();
  });
});

describe('Backoff.measured', () => {
  async function firstDelay(successMs: number, count = 20): Promise<number | undefined> {
    const { clock, policy } = ceiled({
      attemptCeiling: undefined,
      backoff: Backoff.measured({ jitter: 'none' }),
      attempts: 2,
    });
    await warm(clock, policy, successMs, count);
    let attempt = 0;
    const result = policy.tryRun(({ signal }) =>
      ++attempt === 1 ? Promise.reject(new Error('down')) : after(clock, () => 1)({ signal }),
    );
    await clock.runAll();
    return (await result).attempts[0]!.delay;
  }

  it('bases the curve on the p50 of successful attempts once 20 are seen, within 10× of the written 100 ms', async () => {
    const measured = await firstDelay(40);
    expect(measured).toBeGreaterThanOrEqual(40);
    expect(measured).toBeLessThan(40 * 1.044);
    expect(await firstDelay(40, 19)).toBe(100); // cold: the written base
    expect(await firstDelay(1)).toBe(10); // 100 / 10
    expect(await firstDelay(5000)).toBe(1000); // 100 × 10
  });

  it('policy.measured and explain show the base; adaptive: false keeps the written one', async () => {
    const { clock, policy } = ceiled({
      attemptCeiling: undefined,
      backoff: Backoff.measured({ multiple: 2, jitter: 'none' }),
    });
    expect(policy.explain().term('backoff')).toMatchObject({ state: 'cold' });
    await warm(clock, policy, 40);
    const base = policy.measured.backoffBase!;
    expect(base).toBeGreaterThanOrEqual(80);
    expect(base).toBeLessThan(80 * 1.044);
    expect(policy.measured.attemptCeiling).toBeUndefined();
    expect(policy.explain().term('backoff')).toMatchObject({ state: 'warm' });
    expect(policy.explain().term('backoff')!.reading).toMatch(
      /^base 8\d\.\d ms \(p50 4\d\.\d ms\)$/,
    );
    expect(policy.with({ adaptive: false }).measured.backoffBase).toBeUndefined();
    expect(() => Backoff.measured({ quantile: 0.9 })).toThrow(
      expect.objectContaining({ field: 'backoff.quantile', value: 0.9 }) as PolicyConfigError,
    );
  });
});
