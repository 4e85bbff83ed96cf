import { PolicyConfigError, Resilience, RetryBudget } from '../../core/index.js';
import { AwsRetry } from './aws-retry.js';
import { Dependency } from './dependency.js';
import { Load } from './load.js';
import { Simulate } from './simulate.js';

/** Resilience.default (3 attempts) with retries decided by `reference` alone, at 50 calls/s for 10 s. */
const run = (reference: AwsRetry, dependency: Dependency) =>
  Simulate.policy(Resilience.default.with({ budget: RetryBudget.none }))
    .against(dependency)
    .under(Load.constant({ perSecond: 50 }))
    .for(10_000)
    .throttledBy(reference)
    .run(1);

const dead = () => Dependency.healthy({ p50: 20, p99: 200 }).outage({ after: 0, lasting: 10_000 });

describe("AwsRetry (the AWS SDKs' retry modes, reference models in the simulator)", () => {
  it('standard: a dead dependency gets the 100 retries a full quota funds (500 / 5), then first attempts only', async () => {
    const report = await run(AwsRetry.standard, dead());
    expect(report.succeeded).toBe(0);
    expect(report.dependencyRequests).toBe(report.calls + 100);
  });

  it('standard: retries after timeouts cost 10, so the dead quota funds 50 of them', async () => {
    // Every request outlives the server-side timeout of 1 ms.
    const report = await run(
      AwsRetry.standard,
      Dependency.healthy({ p50: 20, p99: 200, capacity: { concurrency: 1000, timeout: 1 } }),
    );
    expect(report.succeeded).toBe(0);
    expect(report.dependencyRequests).toBe(report.calls + 50);
  });

  it('standard: at 10 % failures the quota stays full, so every retry is made (as without a budget)', async () => {
    // Per call: +1 for a first-attempt success (90 %), −5 + 5 for a retry that succeeds, −5 for each
    // failed retry (1 % of calls, 0.1 % twice): the quota gains 0.9 − 5 · 0.011 = 0.845 a call.
    const budgetOff = await Simulate.policy(Resilience.default.with({ budget: RetryBudget.none }))
      .against(Dependency.healthy({ p50: 20, p99: 200 }).failing(0.1))
      .under(Load.constant({ perSecond: 50 }))
      .for(10_000)
      .run(1);
    const report = await run(
      AwsRetry.standard,
      Dependency.healthy({ p50: 20, p99: 200 }).failing(0.1),
    );
    expect(report.dependencyRequests).toBe(budgetOff.dependencyRequests);
    expect(report.succeeded).toBe(budgetOff.succeeded);
  });

  it('adaptive: failures that are not throttling leave the send-rate limiter off (the same as standard)', async () => {
    const standard = await run(AwsRetry.standard, dead());
    const adaptive = await run(AwsRetry.adaptive, dead());
    expect(JSON.stringify(adaptive)).toBe(JSON.stringify(standard));
  });

  it('adaptive: overload refusals turn the limiter on, and it sends less than standard', async () => {
    // 2 workers, no queue, 20 ms each: about 100 requests/s of capacity... offered 50/s with bursts.
    const shedding = () =>
      Dependency.healthy({ p50: 60, p99: 200, capacity: { concurrency: 2, queue: 0 } });
    const standard = await run(AwsRetry.standard, shedding());
    const adaptive = await run(AwsRetry.adaptive, shedding());
    expect(standard.dependencyCounters.overloaded).toBeGreaterThan(0);
    expect(adaptive.dependencyRequests).toBeLessThan(standard.dependencyRequests);
    expect(adaptive.dependencyCounters.overloaded).toBeLessThan(
      standard.dependencyCounters.overloaded,
    );
  });

  it('is named, and refused by throttledBy when it is something else', () => {
    expect([String(AwsRetry.standard), String(AwsRetry.adaptive)]).toEqual([
      'AWS standard retry quota',
      'AWS adaptive retry (quota + send-rate limiter)',
    ]);
    expect(() => Simulate.policy(Resilience.default).throttledBy({} as AwsRetry)).toThrow(
      PolicyConfigError,
    );
    expect(() => Simulate.policy(Resilience.default).throttledBy({} as AwsRetry)).toThrow(
      /throttle: .* must be an AdaptiveThrottle \(AdaptiveThrottle.sre\(\)\) or an AwsRetry/,
    );
  });
});
