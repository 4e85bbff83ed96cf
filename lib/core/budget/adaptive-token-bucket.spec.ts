import { Verdict } from '../classification/verdict.js';
import { AttemptTimeoutError } from '../errors.js';
import { Resilience } from '../policy/policy.js';
import { FakeClock } from '../time/fake-clock.js';
import { AdaptiveTokenBucket, RETRY_REFUND } from './adaptive-token-bucket.js';
import { RetryBudget, TokenBucket } from './retry-budget.js';
import { RetryEvidence } from './retry-evidence.js';

/** Records `n` outcomes of attempt number `attempt` with the given verdict and duration (ms). */
function feed(
  target: { record(a: number, v: Verdict, d: number, e: unknown): void },
  n: number,
  attempt: number,
  verdict: Verdict,
  duration = 10,
  error?: unknown,
): void {
  for (let i = 0; i < n; i++) target.record(attempt, verdict, duration, error);
}

const bucketTarget = (bucket: AdaptiveTokenBucket) => ({
  record: (a: number, v: Verdict, d: number, e: unknown) => bucket.recordAttempt(a, v, d, e),
});

describe('RetryEvidence', () => {
  it('says strained (the static bucket) until 20 retries were seen, then working when they succeed as first attempts do', () => {
    const evidence = new RetryEvidence();
    feed(evidence, 100, 1, Verdict.ok);
    feed(evidence, 19, 2, Verdict.ok);
    expect(evidence.regime).toBe('strained');
    feed(evidence, 1, 2, Verdict.ok);
    expect(evidence.regime).toBe('working');
    expect(evidence.retryEffectiveness).toBe(1);
  });

  it('says failing when retries succeed below 40 %, or below 0.7 × the first-attempt success rate', () => {
    const low = new RetryEvidence();
    for (let i = 0; i < 50; i++)
      low.record(2, i % 10 < 3 ? Verdict.ok : Verdict.transient, 10, undefined);
    expect(low.retryEffectiveness).toBeCloseTo(0.3, 10);
    // Before 100 retries only half the thresholds say failing: 30 % is the static bucket still…
    expect(low.regime).toBe('strained');
    for (let i = 0; i < 50; i++)
      low.record(2, i % 10 < 3 ? Verdict.ok : Verdict.transient, 10, undefined);
    expect(low.regime).toBe('failing');
    // …and a dead dependency's 0 % says failing at once.
    const dead = new RetryEvidence();
    feed(dead, 20, 2, Verdict.transient);
    expect(dead.regime).toBe('failing');

    // Retries at 50 % while 90 % of first attempts succeed: 0.5 < 0.7 × 0.9.
    const relative = new RetryEvidence();
    for (let i = 0; i < 100; i++)
      relative.record(1, i % 10 === 0 ? Verdict.transient : Verdict.ok, 10, undefined);
    for (let i = 0; i < 100; i++)
      relative.record(2, i % 2 === 0 ? Verdict.ok : Verdict.transient, 10, undefined);
    expect(relative.firstAttemptSuccess).toBeCloseTo(0.9, 10);
    expect(relative.regime).toBe('failing');
    // The same retries with first attempts at 60 % work (0.5 ≥ 0.42 and ≥ 0.4).
    const headroom = new RetryEvidence();
    for (let i = 0; i < 100; i++)
      headroom.record(1, i % 10 < 4 ? Verdict.transient : Verdict.ok, 10, undefined);
    for (let i = 0; i < 50; i++)
      headroom.record(2, i % 2 === 0 ? Verdict.ok : Verdict.transient, 10, undefined);
    expect(headroom.regime).toBe('working');
  });

  it('sees a sudden fall: recent first attempts 20 points below the long view (the 26th failure after 1000 successes)', () => {
    const evidence = new RetryEvidence();
    feed(evidence, 1000, 1, Verdict.ok);
    feed(evidence, 20, 2, Verdict.ok);
    expect(evidence.regime).toBe('working');
    feed(evidence, 25, 1, Verdict.transient);
    expect(evidence.suddenFall).toBe(false);
    feed(evidence, 1, 1, Verdict.transient);
    expect(evidence.suddenFall).toBe(true);
    expect(evidence.regime).toBe('failing');
  });

  it('says strained when successes slow past 2 × the baseline, which a slow dependency does not drag up', () => {
    const evidence = new RetryEvidence();
    feed(evidence, 1000, 1, Verdict.ok, 30);
    feed(evidence, 20, 2, Verdict.ok, 30);
    expect(evidence.latencyBaseline).toBe(30);
    expect(evidence.regime).toBe('working');
    feed(evidence, 200, 1, Verdict.ok, 100);
    feed(evidence, 20, 2, Verdict.ok, 100);
    expect(evidence.strained).toBe(true);
    expect(evidence.regime).toBe('strained');
    // Only the samples taken before the recent latency passed 1.5 × 30 moved it at its normal pace.
    expect(evidence.latencyBaseline).toBeLessThan(34);
  });

  it('says strained when more than 25 % of retries are Throttled or attempt timeouts', () => {
    const evidence = new RetryEvidence();
    feed(evidence, 100, 1, Verdict.ok, 0);
    for (let i = 0; i < 40; i++)
      evidence.record(2, i % 5 === 0 ? Verdict.throttled() : Verdict.ok, 0, undefined);
    expect(evidence.regime).toBe('working');
    const timeouts = new RetryEvidence();
    for (let i = 0; i < 100; i++)
      timeouts.record(1, i % 10 === 0 ? Verdict.transient : Verdict.ok, 0, undefined);
    // 30 % of retries end by the attempt timeout (effectiveness 0.7 ≥ 0.7 × 0.9: they still work).
    for (let i = 0; i < 40; i++)
      timeouts.record(
        2,
        i % 10 < 3 ? Verdict.transient : Verdict.ok,
        0,
        i % 10 < 3 ? new AttemptTimeoutError(25) : undefined,
      );
    expect(timeouts.regime).toBe('strained');
  });

  it('takes Limited and Permanent outcomes as no evidence', () => {
    const evidence = new RetryEvidence();
    feed(evidence, 19, 2, Verdict.ok);
    feed(evidence, 50, 2, Verdict.limited);
    feed(evidence, 50, 2, Verdict.permanent);
    expect(evidence.regime).toBe('strained');
    expect(evidence.retryEffectiveness).toBe(1);
  });
});

describe('AdaptiveTokenBucket', () => {
  it('while retries fail: a retry pays a token up front and a call ticket (0.1 per call, 1 held)', () => {
    const clock = new FakeClock();
    const bucket = new AdaptiveTokenBucket({}, clock);
    // A fresh bucket is the static one: 20 retries fund, the tokens they spend are gone.
    expect(bucket.regime).toBe('strained');
    for (let i = 0; i < 20; i++) expect(bucket.tryAcquire()).toBe(true);
    feed(bucketTarget(bucket), 20, 2, Verdict.transient);
    expect(bucket.regime).toBe('failing');
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.level).toBe(9);
    expect(bucket.tryAcquire()).toBe(false);
    for (let i = 0; i < 9; i++) bucket.recordCall();
    expect(bucket.canFundRetry).toBe(false);
    bucket.recordCall();
    expect(bucket.canFundRetry).toBe(true);
    expect(bucket.tryAcquire()).toBe(true);
    // A refunded retry gives its ticket back too.
    bucket.refund();
    expect(bucket.level).toBe(9);
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
  });

  it('while retries work: credit of one second of retries (the floor in the first second), 2.5 back per successful retry', async () => {
    const clock = new FakeClock();
    const bucket = new AdaptiveTokenBucket({}, clock);
    feed(bucketTarget(bucket), 100, 1, Verdict.ok);
    feed(bucketTarget(bucket), 20, 2, Verdict.ok);
    expect(bucket.regime).toBe('working');
    let granted = 0;
    while (bucket.tryAcquire()) granted++;
    // 30 tokens, then 3 on credit (the floor's rate: no whole second of retries yet).
    expect(granted).toBe(33);
    expect(bucket.level).toBe(0);
    bucket.recordAttempt(2, Verdict.ok, 10, undefined);
    expect(RETRY_REFUND).toBe(2.5);
    // −0.5 after the refund: two more down to −2.5, then −3.5 would pass the credit of 3.
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(true);
    expect(bucket.tryAcquire()).toBe(false);
    // A second later the floor has added 3 (0.5) and the credit is the 35 retries granted in the last second.
    await clock.advance(1000);
    granted = 0;
    while (bucket.tryAcquire()) granted++;
    expect(granted).toBe(35);
  });

  it('under strain is the static bucket: a whole token up front, no ticket, no credit', () => {
    const clock = new FakeClock();
    const bucket = new AdaptiveTokenBucket({}, clock);
    feed(bucketTarget(bucket), 1000, 1, Verdict.ok, 30);
    feed(bucketTarget(bucket), 20, 2, Verdict.ok, 30);
    feed(bucketTarget(bucket), 100, 2, Verdict.ok, 100);
    expect(bucket.regime).toBe('strained');
    let granted = 0;
    while (bucket.tryAcquire()) granted++;
    expect(granted).toBe(30);
    // A successful retry deposits the fraction, as in the static bucket.
    for (let i = 0; i < 10; i++) bucket.recordAttempt(2, Verdict.ok, 100, undefined);
    expect(bucket.level).toBeCloseTo(1, 10);
  });

  it('lets Sheddable work spend only while half the capacity would remain, in every regime', () => {
    const clock = new FakeClock();
    const bucket = new AdaptiveTokenBucket({}, clock);
    feed(bucketTarget(bucket), 100, 1, Verdict.ok);
    feed(bucketTarget(bucket), 20, 2, Verdict.ok);
    let granted = 0;
    while (bucket.tryAcquire(true)) granted++;
    expect(granted).toBe(15);
  });

  it('is the default: RetryBudget.automatic resolves to it and times retries; RetryBudget.tokenBucket stays static', () => {
    const clock = new FakeClock();
    const policy = Resilience.default.with({ clock });
    expect(policy.bucket()).toBeInstanceOf(AdaptiveTokenBucket);
    expect(policy.bucket()!.timesRetries).toBe(true);
    const legacy = Resilience.default.with({
      clock,
      budget: RetryBudget.tokenBucket({ fraction: 0.2 }),
    });
    const state = legacy.bucket()!;
    expect(state).toBeInstanceOf(TokenBucket);
    expect(state).not.toBeInstanceOf(AdaptiveTokenBucket);
    expect(state.timesRetries).toBe(false);
  });
});
