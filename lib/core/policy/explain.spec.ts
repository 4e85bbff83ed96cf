import { Backoff } from '../backoff/backoff.js';
import { Breaker } from '../breaker/breaker-value.js';
import { Hedge } from '../hedging/hedge-value.js';
import { Limit } from '../limits/limit-value.js';
import { RetryBudget } from '../budget/retry-budget.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from './policy.js';

class Down extends Error {}

describe('policy.explain()', () => {
  it('a policy with every feature off: the constants warm, the rest not configured', () => {
    const policy = Resilience.default.with({
      name: 'plain',
      attempts: 1,
      budget: RetryBudget.none,
      backoff: Backoff.none,
    });
    expect(policy.explain().toString()).toBe(
      [
        'policy plain',
        '  attempts        1 in total (0 retries) [warm]',
        '  deadline        not configured',
        '  attemptTimeout  not configured',
        '  backoff         none: retries at once [warm]',
        '  budget          not configured',
        '  breaker         not configured',
        '  limit           not configured',
        '  hedge           not configured',
        '  attemptCeiling  not configured',
        '  saturation      not configured',
        '  restarts        3 re-opens of a checkpointed stream [warm]',
      ].join('\n'),
    );
  });

  it('live readings: the budget spent by retries, the breaker cold until it has seen attempts, then warm', async () => {
    const clock = new FakeClock();
    const policy = Resilience.http.with({
      name: 'payments',
      clock,
      backoff: Backoff.constant(10),
      budget: RetryBudget.of({ fraction: 0.1, minimumPerSecond: 1 }),
      limit: Limit.concurrency(4),
      hedge: Hedge.at(0.9),
    });
    const cold = policy.explain();
    expect(cold.term('breaker')).toEqual({
      term: 'breaker',
      configured:
        'trips on a run of Transient failures improbable at the error rate seen (5 from cold), never while ≥ 50 % of recent attempts succeeded; breaks of 1000 ms',
      reading: 'closed; 0 of 0 attempts failed in the trip window, a run of 0',
      state: 'cold',
    });
    expect(cold.term('budget')).toEqual({
      term: 'budget',
      configured: 'retries funded from 10 tokens',
      reading: '10 tokens left (0 % spent)',
      state: 'warm',
    });
    expect(cold.term('hedge')).toEqual({
      term: 'hedge',
      configured: 'a second attempt after the p90 of recent latency, at most 2 at once',
      reading: 'threshold not armed (fewer than 20 successes seen)',
      state: 'cold',
    });

    const failing = policy.run(() => Promise.reject(new Down('down')));
    const settled = failing.catch(() => undefined);
    await clock.advance(100);
    await settled;
    const warm = policy.explain();
    expect(warm.term('breaker')!.reading).toBe(
      'closed; 3 of 3 attempts failed in the trip window, a run of 3',
    );
    expect(warm.term('breaker')!.state).toBe('warm');
    expect(warm.term('budget')!.reading).toBe('8.1 tokens left (19 % spent)');
    expect(warm.term('limit')).toEqual({
      term: 'limit',
      configured: 'concurrency, queue of 0',
      reading: 'limit 4, 0 in flight, 0 queued',
      state: 'warm',
    });
    expect(warm.toString().split('\n')[0]).toBe('policy payments');
  });

  it('hedge: the live threshold once the window holds 20 successes, following the window', () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({ clock, hedge: Hedge.at(0.9) });
    const latency = policy.hedger()!.latency;
    for (let i = 0; i < 19; i++) latency.add(clock.now(), 100);
    expect(policy.explain().term('hedge')!.state).toBe('cold');
    latency.add(clock.now(), 100);
    expect(policy.explain().term('hedge')).toEqual({
      term: 'hedge',
      configured: 'a second attempt after the p90 of recent latency, at most 2 at once',
      reading: 'threshold 101.8 ms',
      state: 'warm',
    });
    for (let i = 0; i < 180; i++) latency.add(clock.now(), 400);
    expect(policy.explain().term('hedge')!.reading).toBe('threshold 407.6 ms');
  });

  it('an explicit consecutiveFailures is explained as the literal run it is', () => {
    const policy = Resilience.default.with({
      name: 'b',
      breaker: Breaker.with({ consecutiveFailures: 7, breakDuration: 2500 }),
    });
    expect(policy.explain().term('breaker')!.configured).toBe(
      'trips on 7 consecutive Transient failures; breaks of 2500 ms',
    );
  });
});
