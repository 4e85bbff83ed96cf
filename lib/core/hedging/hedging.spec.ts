import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { Ambient } from '../ambient/ambient-context.js';
import { AttemptSupersededError } from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import type { ConcurrencyLimiter } from '../limits/concurrency-limiter.js';
import { Limit } from '../limits/limit-value.js';
import { type Policy, Resilience } from '../policy/policy.js';
import type { PolicyOptions } from '../policy/policy-options.js';
import { FakeClock } from '../time/fake-clock.js';
import { Hedge } from './hedge-value.js';

class Down extends Error {
  override name = 'Down';
}

interface Pending {
  readonly attempt: number;
  readonly signal: AbortSignal;
  resolve(value: string): void;
  reject(error: unknown): void;
}

/** Work that settles when told; every attempt it was given, in order, with its signal. */
function gate() {
  const pending: Pending[] = [];
  const work = ({ signal, attempt }: { signal: AbortSignal; attempt: number }) =>
    new Promise<string>((resolve, reject) => {
      pending.push({ attempt, signal, resolve, reject });
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  return { work, pending };
}

/** A hedged policy whose threshold is warm near 100 ms (20 successes of 100 ms in its window); `T` is it, rounded up. */
function hedged(
  extra: PolicyOptions = {},
  warm = true,
): { clock: FakeClock; events: CallEvent[]; policy: Policy; T: number } {
  const clock = new FakeClock();
  const events: CallEvent[] = [];
  const policy = Resilience.default
    .with({
      name: 'prices',
      clock,
      random: () => 0.5,
      budget: RetryBudget.none,
      backoff: Backoff.constant(50),
      hedge: Hedge.at(0.95),
      repeatable: true,
      ...extra,
    })
    .withListener((e) => events.push(e));
  if (warm) for (let i = 0; i < 20; i++) policy.hedger()!.latency.add(0, 100);
  return {
    clock,
    events,
    policy,
    T: warm ? Math.ceil(policy.hedger()!.threshold(0)!) : Number.NaN,
  };
}

const kinds = (events: CallEvent[]) => events.map((e) => `${e.kind}#${e.attempt}`);

describe('hedging (Hedge.at)', () => {
  it('starts a second attempt when the first outlasts the live p95; the first success wins and the loser is aborted', async () => {
    const { clock, events, policy, T } = hedged();
    const g = gate();
    const call = policy.tryRun(g.work);
    await clock.advance(T - 1);
    expect(g.pending).toHaveLength(1);
    await clock.advance(1);
    expect(g.pending.map((p) => p.attempt)).toEqual([1, 2]);
    g.pending[1].resolve('from the hedge');
    const result = await call;
    expect(result.value).toBe('from the hedge');
    expect(result.reason).toBe('succeeded');
    expect(g.pending[0].signal.aborted).toBe(true);
    expect(g.pending[0].signal.reason).toBeInstanceOf(AttemptSupersededError);
    expect((g.pending[0].signal.reason as AttemptSupersededError).winner).toBe(2);
    // The winner's signal stays usable (a body read after the answer keeps working).
    expect(g.pending[1].signal.aborted).toBe(false);
    expect(kinds(events)).toEqual(['hedged#2', 'attempt#2', 'succeeded#2']);
    const hedgedEvent = events[0];
    expect(hedgedEvent.delay).toBeCloseTo(100, -1);
    expect(hedgedEvent.duration).toBeCloseTo(100, -1);
    expect(events[2].hedgeWon).toBe(true);
    // The loser aborted by us is not a failure: one attempt is recorded.
    expect(result.attempts.map((a) => [a.attempt, a.verdict])).toEqual([[2, 'Ok']]);
  });

  it('keeps the original answer when it wins; the hedge is aborted', async () => {
    const { clock, events, policy, T } = hedged();
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(T);
    expect(g.pending).toHaveLength(2);
    await clock.advance(30);
    g.pending[0].resolve('original');
    expect(await call).toBe('original');
    expect(g.pending[1].signal.aborted).toBe(true);
    expect(kinds(events)).toEqual(['hedged#2', 'attempt#1', 'succeeded#2']);
    expect(events[2].hedgeWon).toBe(false);
  });

  it('a fast failure starts the next attempt after the backoff and cancels the pending hedge timer: one follow-up', async () => {
    const { clock, events, policy } = hedged();
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(20);
    g.pending[0].reject(new Down());
    await clock.advance(49);
    expect(g.pending).toHaveLength(1);
    await clock.advance(1);
    // The retry after the 50 ms backoff, not a hedge (none at 100 ms from the first attempt's start).
    expect(g.pending.map((p) => p.attempt)).toEqual([1, 2]);
    await clock.advance(99);
    expect(g.pending).toHaveLength(2);
    g.pending[1].resolve('ok');
    expect(await call).toBe('ok');
    expect(kinds(events)).toEqual(['attempt#1', 'retrying#1', 'attempt#2', 'succeeded#2']);
  });

  it('a failure while another attempt runs waits for that one (never two follow-ups for one failure)', async () => {
    const { clock, events, policy, T } = hedged();
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(T);
    g.pending[0].reject(new Down());
    await clock.advance(1000);
    expect(g.pending).toHaveLength(2);
    g.pending[1].resolve('hedge');
    expect(await call).toBe('hedge');
    expect(kinds(events)).toEqual(['hedged#2', 'attempt#1', 'attempt#2', 'succeeded#2']);
  });

  it('when every attempt in flight failed, the retry is numbered after the attempts started', async () => {
    const { clock, events, policy, T } = hedged({ attempts: 4 });
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(T);
    g.pending[1].reject(new Down());
    g.pending[0].reject(new Down());
    await clock.advance(50);
    expect(g.pending.map((p) => p.attempt)).toEqual([1, 2, 3]);
    g.pending[2].resolve('third');
    expect(await call).toBe('third');
    expect(kinds(events)).toEqual([
      'hedged#2',
      'attempt#2',
      'attempt#1',
      'retrying#2',
      'attempt#3',
      'succeeded#3',
    ]);
  });

  it('hedges count against attempts: with 2 attempts a failed race ends attemptsExhausted', async () => {
    const { clock, policy, T } = hedged({ attempts: 2 });
    const g = gate();
    const call = policy.tryRun(g.work);
    await clock.advance(T);
    g.pending[0].reject(new Down());
    g.pending[1].reject(new Down());
    const result = await call;
    expect(result.reason).toBe('attemptsExhausted');
    expect(result.attempts.map((a) => a.attempt)).toEqual([1, 2]);
  });

  it('runs at most maximumConcurrent attempts at once, each hedge one threshold after the last', async () => {
    const { clock, policy, T } = hedged({
      attempts: 5,
      hedge: Hedge.at(0.95, { maximumConcurrent: 3 }),
    });
    for (let i = 0; i < 20; i++) policy.hedger()!.latency.add(0, 100);
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(T);
    expect(g.pending).toHaveLength(2);
    await clock.advance(T);
    expect(g.pending).toHaveLength(3);
    await clock.advance(1000);
    expect(g.pending).toHaveLength(3);
    g.pending[2].resolve('third');
    expect(await call).toBe('third');
    expect(g.pending.slice(0, 2).map((p) => p.signal.aborted)).toEqual([true, true]);
  });

  it('a Permanent answer of one attempt ends the race at once and aborts the other', async () => {
    const { clock, policy, T } = hedged();
    const g = gate();
    const call = policy.tryRun(g.work);
    await clock.advance(T);
    const permanent = new RangeError('bad request');
    g.pending[1].reject(permanent);
    const result = await call;
    expect(result.reason).toBe('permanent');
    expect(result.error).toBe(permanent);
    expect(g.pending[0].signal.aborted).toBe(true);
  });

  it('the caller aborting cancels every attempt; no rejection is left unhandled', async () => {
    const { clock, policy, T } = hedged();
    const g = gate();
    const caller = new AbortController();
    const call = policy.tryRun(g.work, { signal: caller.signal });
    await clock.advance(T);
    caller.abort(new Error('gone'));
    const result = await call;
    expect(result.reason).toBe('cancelled');
    expect(g.pending.map((p) => p.signal.aborted)).toEqual([true, true]);
  });

  it('does not hedge before 20 successes (cold), nor a call that is not repeatable', async () => {
    const cold = hedged({}, false);
    const g = gate();
    const first = cold.policy.run(g.work);
    for (let i = 0; i < 19; i++) cold.policy.hedger()!.latency.add(0, 100);
    await cold.clock.advance(5_000);
    expect(g.pending).toHaveLength(1);
    g.pending[0].resolve('x');
    await first;

    const warm = hedged({ repeatable: false });
    const h = gate();
    const plain = warm.policy.run(h.work);
    await warm.clock.advance(5_000);
    expect(h.pending).toHaveLength(1);
    h.pending[0].resolve('y');
    await plain;
    // Marked per call instead.
    const marked = warm.policy.run(h.work, { repeatable: true });
    await warm.clock.advance(warm.T);
    expect(h.pending).toHaveLength(3);
    h.pending[2].resolve('z');
    expect(await marked).toBe('z');
  });

  it('never hedges Sheddable work', async () => {
    const { clock, policy } = hedged();
    const g = gate();
    const call = Ambient.run({ criticality: 'sheddable' }, () => policy.run(g.work));
    await clock.advance(5_000);
    expect(g.pending).toHaveLength(1);
    g.pending[0].resolve('x');
    await call;
  });

  it('the retry budget pays for a hedge: one token taken when the hedge starts, none for a call that did not hedge', async () => {
    const { clock, policy, T } = hedged({
      budget: RetryBudget.of({ fraction: 0.1, minimumPerSecond: 0 }),
    });
    const bucket = policy.bucket()!;
    const acquire = bucket.tryAcquire.bind(bucket);
    const paid: boolean[] = [];
    bucket.tryAcquire = (sheddable?: boolean) => {
      const funded = acquire(sheddable);
      paid.push(funded);
      return funded;
    };
    const quick = gate();
    const fast = policy.run(quick.work);
    await clock.advance(T - 1);
    quick.pending[0].resolve('fast');
    expect(await fast).toBe('fast');
    expect(paid).toEqual([]);
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(T);
    expect(g.pending.map((p) => p.attempt)).toEqual([1, 2]);
    expect(paid).toEqual([true]);
    g.pending[1].resolve('hedge');
    expect(await call).toBe('hedge');
  });

  it('a retry budget that says no stops the hedge, never the original', async () => {
    const { clock, policy } = hedged({
      budget: RetryBudget.of({ fraction: 0.1, minimumPerSecond: 0 }),
    });
    const bucket = policy.bucket()!;
    while (bucket.tryAcquire()) {
      // Spend every token the bucket holds.
    }
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(5_000);
    expect(g.pending).toHaveLength(1);
    g.pending[0].resolve('original');
    expect(await call).toBe('original');
  });

  it('no hedge while the breaker is not closed or the failure rate reaches suppressAt of its trip point', async () => {
    const { clock, policy } = hedged({ breaker: Breaker.default });
    const latency = policy.hedger()!.latency;
    // 25 % failures = 0.5 × the 0.5 trip point.
    for (let i = 0; i < 7; i++) latency.fail(0);
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(5_000);
    expect(g.pending).toHaveLength(1);
    g.pending[0].resolve('x');
    await call;

    // Half-open (isolated, then released with no break left): the call runs as a probe, unhedged.
    const probing = hedged({ breaker: Breaker.default });
    probing.policy.breaker()!.isolate()();
    expect(probing.policy.breaker()!.state).toBe('halfOpen');
    const h = gate();
    const probe = probing.policy.run(h.work);
    await probing.clock.advance(5_000);
    expect(h.pending).toHaveLength(1);
    h.pending[0].resolve('probe');
    expect(await probe).toBe('probe');

    // Closed, and the failure rate below 25 %: hedged.
    const closed = hedged({ breaker: Breaker.default });
    for (let i = 0; i < 6; i++) closed.policy.hedger()!.latency.fail(0);
    const k = gate();
    const hedgedCall = closed.policy.run(k.work);
    await closed.clock.advance(closed.T);
    expect(k.pending).toHaveLength(2);
    k.pending[1].resolve('hedge');
    expect(await hedgedCall).toBe('hedge');
  });

  it('a hedge takes a free limiter slot or does not start (it never queues)', async () => {
    const { clock, policy } = hedged({ limit: Limit.concurrency(1, { queue: 10 }) });
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(5_000);
    expect(g.pending).toHaveLength(1);
    expect((policy.limiter() as ConcurrencyLimiter).inflight).toBe(1);
    g.pending[0].resolve('x');
    await call;
    expect((policy.limiter() as ConcurrencyLimiter).inflight).toBe(0);

    const two = hedged({ limit: Limit.concurrency(2) });
    const h = gate();
    const hedgedCall = two.policy.run(h.work);
    await two.clock.advance(two.T);
    expect((two.policy.limiter() as ConcurrencyLimiter).inflight).toBe(2);
    h.pending[1].resolve('hedge');
    await hedgedCall;
    // The loser's slot came back with the race's end.
    expect((two.policy.limiter() as ConcurrencyLimiter).inflight).toBe(0);
  });

  it('learns the threshold from the race: a hedged call still counts above it', async () => {
    const { clock, policy, T } = hedged();
    const g = gate();
    const call = policy.run(g.work);
    await clock.advance(T + 30);
    g.pending[1].resolve('hedge');
    await call;
    const latency = policy.hedger()!.latency;
    expect(latency.count(clock.now())).toBe(21);
    // 130 ms from the race's start (the hedge ran 30 ms of it).
    expect(latency.quantile(clock.now(), 0.99)).toBeGreaterThan(120);
  });

  it('winRate: while hedges rarely win, only one opportunity in 10 is taken', async () => {
    const { clock, policy, T } = hedged({ attempts: 3, hedge: Hedge.at(0.95, { winRate: 0.5 }) });
    const state = policy.hedger()!;
    // A deep window, so that 60 calls just above the threshold do not move it.
    for (let i = 0; i < 2000; i++) state.latency.add(0, 100);
    let hedges = 0;
    for (let i = 0; i < 60; i++) {
      const g = gate();
      const call = policy.run(g.work);
      await clock.advance(T + 1);
      hedges += g.pending.length - 1;
      g.pending[0].resolve('original');
      await call;
      // Keep the share cap out of this test: a full bucket before every call.
      for (let k = 0; k < 40; k++) state.callStarted();
    }
    // 20 hedges to learn that they lose, then 1 in 10 of the 40 left.
    expect(hedges).toBe(24);
  });

  it('the share cap: while the threshold catches up with a shift of every call, at most 1.5 × (1 − q) of calls hedge (plus a burst of 3)', async () => {
    const { clock, policy, T } = hedged();
    const state = policy.hedger()!;
    for (let i = 0; i < 2000; i++) state.latency.add(0, 100);
    let hedges = 0;
    let firstHedged = 0;
    for (let i = 0; i < 100; i++) {
      const g = gate();
      const call = policy.run(g.work);
      // Every call now takes twice the old p95: without the cap each would hedge.
      await clock.advance(2 * T);
      hedges += g.pending.length - 1;
      if (i < 3) firstHedged += g.pending.length - 1;
      g.pending[0].resolve('slow');
      await call;
    }
    expect(firstHedged).toBe(3);
    // 3 held at the start, then 0.075 a call: 3 + floor(0.15 + 97 × 0.075) = 10 of 100.
    expect(hedges).toBe(10);
    expect(hedges / 100).toBeLessThanOrEqual(1.5 * 0.05 + 3 / 100);
  });

  it('a shift adapts: once the window has caught up the hedged share is back near 1 − q', async () => {
    const { clock, policy } = hedged();
    // 600 calls at 10 ms, then the whole distribution moves to 40 ms (±25 %); each call a fresh draw.
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    let adapting = 0;
    let after = 0;
    for (let i = 0; i < 2100; i++) {
      const base = i < 600 ? 10 : 40;
      const ms = Math.round(base * (0.75 + 0.5 * random()) * 10) / 10;
      const g = gate();
      const call = policy.run(g.work);
      await clock.advance(ms);
      if (i >= 600 && i < 1400) adapting += g.pending.length - 1;
      if (i >= 1400) after += g.pending.length - 1;
      g.pending[0].resolve('x');
      await call;
    }
    // While the 10 ms samples are still in the window (until 30 s after they were taken): capped.
    expect(adapting / 800).toBeLessThanOrEqual(1.5 * 0.05 + 3 / 800);
    // Once they have left (the 700 calls after): back near 1 − q.
    expect(after / 700).toBeLessThanOrEqual(1.1 * 0.05 + 0.01);
    expect(after / 700).toBeGreaterThan(0.03);
  });

  it('refuses bad settings naming the field, the value and the rule', () => {
    expect(() => Hedge.at(1)).toThrow(
      'hedge.quantile: 1 is invalid: must be a number in (0, 1), e.g. 0.95',
    );
    expect(() => Hedge.at(0.95, { maximumConcurrent: 1 })).toThrow(
      'hedge.maximumConcurrent: 1 is invalid: must be an integer in [2, 10]',
    );
    expect(() => Hedge.at(0.95, { suppressAt: 0 })).toThrow(
      'hedge.suppressAt: 0 is invalid: must be a number in (0, 1]',
    );
    expect(() => Hedge.at(0.95, { winRate: 2 })).toThrow(
      'hedge.winRate: 2 is invalid: must be a number in [0, 1]',
    );
    expect(() => Hedge.at(0.95, { delay: 5 } as never)).toThrow(
      'hedge.delay: 5 is invalid: is not a known hedge option',
    );
    expect(() => Resilience.default.with({ hedge: { quantile: 0.95 } as never })).toThrow(
      'must be a Hedge',
    );
    expect(() => Resilience.default.run(() => 1, { repeatable: 'yes' as never })).toThrow(
      'repeatable: "yes" is invalid: must be true or false',
    );
  });
});
