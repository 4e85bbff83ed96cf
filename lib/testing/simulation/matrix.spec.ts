import { type Policy, PolicyConfigError, Resilience, RetryBudget } from '../../core/index.js';
import { Load } from './load.js';
import { MATRIX_SCENARIOS, matrixScenario } from './matrix-scenarios.js';
import { BUDGET_REFERENCES, type MatrixVariant, ScenarioMatrix } from './matrix.js';
import { Simulate } from './simulate.js';

describe('ScenarioMatrix (mechanics)', () => {
  it('measures a cell exactly as a direct simulation of the same scenario and seed', async () => {
    const policy = Resilience.default.with({ name: 'plain' });
    const matrix = await ScenarioMatrix.run(policy, {
      scenarios: ['outage-30s'],
      seeds: [7],
      variants: ['policy'],
    });
    const scenario = matrixScenario('outage-30s');
    const report = await Simulate.policy(policy)
      .against(scenario.dependency(500))
      .under(Load.constant({ perSecond: 500 }))
      .for(scenario.duration)
      .run(7);
    const inOutage = report.perSecond
      .slice(30, 60)
      .reduce((sum, s) => sum + s.dependencyRequests, 0);
    expect(matrix.cell('outage-30s', 'policy', 7)).toEqual({
      seed: 7,
      availability: report.availability,
      loadMultiplier: report.loadMultiplier,
      worstSecond: report.amplification,
      faultAttempts: inOutage,
      breakerOpens: 0,
      p99: report.latency(0.99),
      admittedP99: report.admittedLatency(0.99),
      limited: null,
      goodput: (report.availability * report.calls * 1000) / scenario.duration,
      hedgedShare: 0,
      attemptsBeforeFirstOpen: null,
      timeToRecover: report.timeToRecover,
    });
    expect(inOutage).toBeGreaterThan(15_000); // 30 s × 500 calls/s, plus the retries the budget funds
  });

  it('counts the attempts recorded before the first open, and is deterministic', async () => {
    const options = {
      scenarios: ['cold-start-dead'],
      seeds: [1],
      variants: ['policy', 'breakerOff', 'adaptiveThrottle'] as const,
    };
    const first = await ScenarioMatrix.run(Resilience.http, options);
    const again = await ScenarioMatrix.run(Resilience.http, options);
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    const opened = first.cell('cold-start-dead', 'policy', 1);
    expect(opened.breakerOpens).toBeGreaterThan(0);
    expect(opened.attemptsBeforeFirstOpen).toBeGreaterThanOrEqual(1);
    const off = first.cell('cold-start-dead', 'breakerOff', 1);
    expect([off.breakerOpens, off.attemptsBeforeFirstOpen, off.timeToRecover]).toEqual([
      0,
      null,
      null,
    ]);
    // The reference throttle refuses most attempts to a dead dependency without any breaker.
    expect(first.cell('cold-start-dead', 'adaptiveThrottle', 1).faultAttempts).toBeLessThan(
      off.faultAttempts! / 100,
    );
  });

  it('prints one table row per scenario × variant', async () => {
    const matrix = await ScenarioMatrix.run(Resilience.default.with({ name: 'plain' }), {
      scenarios: ['cold-start-dead'],
      seeds: [1],
      variants: ['policy', 'adaptiveThrottle'],
    });
    const lines = matrix.toString().split('\n');
    expect(lines[0]).toBe('Scenario matrix — policy plain: 500 calls/s, seeds 1');
    expect(lines[2]).toMatch(
      /^scenario\s+variant\s+availability \(min\)\s+load ×\s+worst s ×\s+attempts in fault\s+opens \(max\)\s+first open after \(attempts\)\s+recovered after \(s\)\s+limited$/,
    );
    expect(lines.slice(4).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([
      ['cold-start-dead', 'plain'],
      ['cold-start-dead', 'SRE throttle'],
    ]);
  });

  it('runs the retry-budget references beside the policy, each changing only how retries are funded', async () => {
    const matrix = await ScenarioMatrix.run(Resilience.default, {
      scenarios: ['cold-start-dead'],
      seeds: [1],
      rate: 50,
      variants: ['policy', ...BUDGET_REFERENCES],
    });
    const direct = (policy: Policy) =>
      Simulate.policy(policy)
        .against(matrixScenario('cold-start-dead').dependency(50))
        .under(Load.constant({ perSecond: 50 }))
        .for(30_000)
        .run(1);
    const unbudgeted = await direct(Resilience.default.with({ budget: RetryBudget.none }));
    const calls = unbudgeted.calls;
    // Every request of the run, retries after the last arrival included.
    const sent = (variant: MatrixVariant) =>
      Math.round(matrix.cell('cold-start-dead', variant, 1).loadMultiplier * calls);
    // A dead dependency (for 30 s): without a budget nearly every call makes its 3 attempts (the
    // last arrivals' retries find it back up); the AWS quota funds at most 500 / 5 = 100 retries
    // (only a success refunds it, and only a retry could succeed), the adaptive mode the same (an
    // error is no throttling answer); the static buckets fund what their 30 tokens and 3/s floor
    // hold, the same at 10 % and 20 % since nothing succeeds.
    expect(sent('budgetOff')).toBe(unbudgeted.dependencyRequests);
    expect(sent('budgetOff')).toBeGreaterThan(2.99 * calls);
    // 500 tokens at 5 a retry (10 after a timeout: the model's latency tail outlives its server timeout).
    expect(sent('awsStandard') - calls).toBeGreaterThanOrEqual(50);
    expect(sent('awsStandard') - calls).toBeLessThanOrEqual(100);
    expect(sent('awsAdaptive')).toBe(sent('awsStandard'));
    expect(sent('tokenBucket20')).toBe(sent('tokenBucket10'));
    expect(sent('tokenBucket10') - calls).toBeGreaterThanOrEqual(30 + 3 * 29);
    expect(sent('tokenBucket10') - calls).toBeLessThanOrEqual(30 + 3 * 30);
    expect(
      matrix
        .toString()
        .split('\n')
        .slice(4)
        .map((l) => l.split(/\s{2,}/)[1]),
    ).toEqual([
      'policy',
      'budget off',
      'static 10 %',
      'static 20 %',
      'AWS standard',
      'AWS adaptive',
    ]);
  });

  it('names every scenario of DESIGN §8.1 once, with fault windows inside the run', () => {
    expect(MATRIX_SCENARIOS.map((s) => s.name)).toEqual([
      'healthy',
      'failing-1',
      'failing-10',
      'failing-30',
      'failing-40',
      'failing-50',
      'failing-70',
      'brownout',
      'outage-30s',
      'outage-5m',
      'flapping',
      'overload',
      'overload-3x',
      'queue-latency',
      'slow',
      'cold-start-dead',
      'latency-tail',
      'hanging',
    ]);
    for (const s of MATRIX_SCENARIOS)
      for (const f of s.faults)
        expect([s.name, f.start >= 0 && f.end <= s.duration && f.start < f.end]).toEqual([
          s.name,
          true,
        ]);
  });

  it('rejects bad options naming the field', async () => {
    await expect(ScenarioMatrix.run(Resilience.default, { seeds: [] })).rejects.toThrow(
      PolicyConfigError,
    );
    await expect(ScenarioMatrix.run(Resilience.default, { seeds: [] })).rejects.toThrow(
      'seeds: [] is invalid: must be a non-empty array of seeds',
    );
    await expect(ScenarioMatrix.run(Resilience.default, { seeds: [1, 1.5] })).rejects.toThrow(
      'seeds[1]: 1.5 is invalid: must be an integer in [0, 4294967295]',
    );
    await expect(ScenarioMatrix.run(Resilience.default, { rate: 0 })).rejects.toThrow(
      'rate: 0 is invalid: must be a number of calls per second in (0, 100000]',
    );
    await expect(ScenarioMatrix.run(Resilience.default, { maximumDuration: -1 })).rejects.toThrow(
      'maximumDuration: -1 is invalid: must be a duration in ms > 0 (or Infinity)',
    );
    await expect(ScenarioMatrix.run(Resilience.default, { scenarios: ['nope'] })).rejects.toThrow(
      /scenario: "nope" is invalid/,
    );
    await expect(
      ScenarioMatrix.run(Resilience.default, { variants: ['other' as 'policy'] }),
    ).rejects.toThrow(/variants/);
    await expect(
      ScenarioMatrix.run(Resilience.default, {
        scenarios: ['healthy'],
        maximumDuration: 1000,
        variants: ['limitPerCall'],
      }),
    ).rejects.toThrow(
      'variants: "limitPerCall" is invalid: needs a policy with a concurrency limit (Limit.concurrency or Limit.adaptive)',
    );
  });
});
