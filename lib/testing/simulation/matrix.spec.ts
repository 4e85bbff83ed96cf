import { PolicyConfigError, Resilience } from '../../core/index.js';
import { Load } from './load.js';
import { MATRIX_SCENARIOS, matrixScenario } from './matrix-scenarios.js';
import { ScenarioMatrix } from './matrix.js';
import { Simulate } from './simulate.js';

describe('ScenarioMatrix (mechanics)', () => {
  it('measures a cell exactly as a direct simulation of the same scenario and seed', async () => {
    const policy = Resilience.default.with({ name: 'plain' });
    const matrix = await ScenarioMatrix.run(policy, { scenarios: ['outage-30s'], seeds: [7], variants: ['policy'] });
    const scenario = matrixScenario('outage-30s');
    const report = await Simulate.policy(policy).against(scenario.dependency(500)).under(Load.constant({ perSecond: 500 })).for(scenario.duration).run(7);
    const inOutage = report.perSecond.slice(30, 60).reduce((sum, s) => sum + s.dependencyRequests, 0);
    expect(matrix.cell('outage-30s', 'policy', 7)).toEqual({
      seed: 7,
      availability: report.availability,
      loadMultiplier: report.loadMultiplier,
      worstSecond: report.amplification,
      faultAttempts: inOutage,
      breakerOpens: 0,
      p99: report.latency(0.99),
      hedgedShare: 0,
      attemptsBeforeFirstOpen: null,
      timeToRecover: report.timeToRecover,
    });
    expect(inOutage).toBeGreaterThan(15_000); // 30 s × 500 calls/s, plus the retries the budget funds
  });

  it('counts the attempts recorded before the first open, and is deterministic', async () => {
    const options = { scenarios: ['cold-start-dead'], seeds: [1], variants: ['policy', 'breakerOff', 'adaptiveThrottle'] as const };
    const first = await ScenarioMatrix.run(Resilience.http, options);
    const again = await ScenarioMatrix.run(Resilience.http, options);
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    const opened = first.cell('cold-start-dead', 'policy', 1);
    expect(opened.breakerOpens).toBeGreaterThan(0);
    expect(opened.attemptsBeforeFirstOpen).toBeGreaterThanOrEqual(1);
    const off = first.cell('cold-start-dead', 'breakerOff', 1);
    expect([off.breakerOpens, off.attemptsBeforeFirstOpen, off.timeToRecover]).toEqual([0, null, null]);
    // The reference throttle refuses most attempts to a dead dependency without any breaker.
    expect(first.cell('cold-start-dead', 'adaptiveThrottle', 1).faultAttempts).toBeLessThan(off.faultAttempts! / 100);
  });

  it('prints one table row per scenario × variant', async () => {
    const matrix = await ScenarioMatrix.run(Resilience.default.with({ name: 'plain' }), { scenarios: ['cold-start-dead'], seeds: [1], variants: ['policy', 'adaptiveThrottle'] });
    const lines = matrix.toString().split('\n');
    expect(lines[0]).toBe('Scenario matrix — policy plain: 500 calls/s, seeds 1');
    expect(lines[2]).toMatch(/^scenario\s+variant\s+availability \(min\)\s+load ×\s+worst s ×\s+attempts in fault\s+opens \(max\)\s+first open after\s+recovered after$/);
    expect(lines.slice(4).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([
      ['cold-start-dead', 'plain'],
      ['cold-start-dead', 'SRE throttle'],
    ]);
  });

  it('names every scenario of DESIGN §8.1 once, with fault windows inside the run', () => {
    expect(MATRIX_SCENARIOS.map((s) => s.name)).toEqual([
      'healthy', 'failing-1', 'failing-10', 'failing-30', 'failing-40', 'failing-50', 'failing-70', 'brownout', 'outage-30s', 'outage-5m', 'flapping', 'overload', 'overload-3x', 'queue-latency', 'slow', 'cold-start-dead', 'latency-tail',
    ]);
    for (const s of MATRIX_SCENARIOS) for (const f of s.faults) expect([s.name, f.start >= 0 && f.end <= s.duration && f.start < f.end]).toEqual([s.name, true]);
  });

  it('rejects bad options naming the field', async () => {
    await expect(ScenarioMatrix.run(Resilience.default, { seeds: [] })).rejects.toThrow(PolicyConfigError);
    await expect(ScenarioMatrix.run(Resilience.default, { seeds: [] })).rejects.toThrow('seeds: [] is invalid: must be a non-empty array of seeds');
    await expect(ScenarioMatrix.run(Resilience.default, { seeds: [1, 1.5] })).rejects.toThrow('seeds[1]: 1.5 is invalid: must be an integer in [0, 4294967295]');
    await expect(ScenarioMatrix.run(Resilience.default, { rate: 0 })).rejects.toThrow('rate: 0 is invalid: must be a number of calls per second in (0, 100000]');
    await expect(ScenarioMatrix.run(Resilience.default, { maximumDuration: -1 })).rejects.toThrow('maximumDuration: -1 is invalid: must be a duration in ms > 0 (or Infinity)');
    await expect(ScenarioMatrix.run(Resilience.default, { scenarios: ['nope'] })).rejects.toThrow(/scenario: "nope" is invalid/);
    await expect(ScenarioMatrix.run(Resilience.default, { variants: ['other' as 'policy'] })).rejects.toThrow(/variants/);
  });
});
