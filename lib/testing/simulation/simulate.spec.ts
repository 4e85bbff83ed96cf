import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Breaker,
  DEFAULT_OPTIONS,
  PolicyConfigError,
  type PolicyOptions,
  Resilience,
  RetryBudget,
} from '../../core/index.js';
import { Dependency } from './dependency.js';
import { Load } from './load.js';
import { Simulate } from './simulate.js';

/** A small fixed scenario: 10 s at 100 calls/s, 8× slower from 3 s to 7 s. */
const golden = () =>
  Simulate.policy(Resilience.default.with({ name: 'golden' }))
    .against(
      Dependency.healthy({
        p50: 20,
        p99: 200,
        capacity: { concurrency: 10, timeout: 150 },
      }).brownout({ after: 3000, slower: 8, lasting: 4000 }),
    )
    .under(Load.constant({ perSecond: 100 }))
    .for(10_000);

/**
 * SHA-256 of `JSON.stringify(report)` for the golden scenario, seed 42. A change here means the
 * simulator, a model or the executor's decisions changed: check why before updating it.
 */
const GOLDEN_SHA256 = '1e00626e4116011935ab4efc37d3b05e08635d7cc36a828d2d3ea51333b6365e';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('Simulate', () => {
  it('gives byte-identical JSON for the same seed, and a different run for another seed', async () => {
    const first = JSON.stringify(await golden().run(42));
    const second = JSON.stringify(await golden().run(42));
    expect(second).toBe(first);
    expect(JSON.stringify(await golden().run(43))).not.toBe(first);
  });

  it('matches the committed golden hash (guards against drift)', async () => {
    expect(sha256(JSON.stringify(await golden().run(42)))).toBe(GOLDEN_SHA256);
  });

  it('settles the same way with microtask turns as with a macrotask per instant', async () => {
    const timed = Simulate.policy(Resilience.default.with({ attemptTimeout: 120, deadline: 1500 }))
      .against(
        Dependency.healthy({ p50: 20, p99: 200, capacity: { concurrency: 10 } }).brownout({
          after: 2000,
          slower: 8,
          lasting: 3000,
        }),
      )
      .under(Load.constant({ perSecond: 100, arrivals: 'poisson' }))
      .for(8000);
    for (const builder of [golden(), timed]) {
      const fast = JSON.stringify(await builder.run(5));
      const exact = JSON.stringify(await builder.run(5, { settle: 'macrotask' }));
      expect(fast).toBe(exact);
    }
  });

  it('reports calls, attempts, per-second series and recovery consistently', async () => {
    const report = await golden().run(42);
    const json = report.toJSON();
    expect(report.calls).toBe(1000);
    expect(report.succeeded + report.failed).toBe(report.calls);
    expect(report.perSecond).toHaveLength(10);
    expect(report.perSecond.reduce((sum, s) => sum + s.calls, 0)).toBe(1000);
    expect(report.perSecond.reduce((sum, s) => sum + s.succeeded, 0)).toBe(report.succeeded);
    expect(report.loadMultiplier).toBeCloseTo(report.dependencyRequests / report.calls, 10);
    const worst = report.perSecond[report.worstSecond]!;
    expect(report.amplification).toBeCloseTo(worst.dependencyRequests / worst.calls, 10);
    expect(worst.second).toBeGreaterThanOrEqual(3);
    expect(report.perSecond[0]!.breakerState).toBeNull(); // no breaker in the policy
    expect(report.perSecond[4]!.budgetUtilization).toBeGreaterThan(0.5); // the brownout drains the bucket
    expect(report.perSecond[5]!.availability).toBeLessThan(0.9);
    expect(report.timeToRecover).toBe(0); // second 7 is healthy again
    expect(report.latency(0.5)).toBeLessThanOrEqual(report.latency(0.99));
    expect(() => report.latency(1.5)).toThrow(
      new RangeError('latency(q): q must be a number in [0, 1], got 1.5'),
    );
    expect(json.reasons.succeeded).toBe(report.succeeded);
    expect(report.toString()).toContain('Amplification');
    expect(report.toString().split('\n').length).toBeGreaterThan(20);
  });

  it('reports no time to recover without a fault window', async () => {
    const report = await Simulate.policy(Resilience.default)
      .against(Dependency.healthy({ p50: 5, p99: 20 }).failing(0.2))
      .under(Load.constant({ perSecond: 50 }))
      .for(3000)
      .run(1);
    expect(report.timeToRecover).toBeUndefined();
    expect(report.toJSON().timeToRecover).toBeNull();
    expect(report.dependencyCounters.failed).toBeGreaterThan(0);
  });

  it('gives every run a fresh budget, even for RetryBudget.of and shared budgets', async () => {
    const builder = (budget: RetryBudget) =>
      Simulate.policy(Resilience.default.with({ budget }))
        .against(Dependency.healthy({ p50: 10, p99: 50 }).failing(0.5))
        .under(Load.constant({ perSecond: 100 }))
        .for(3000);
    const shared = RetryBudget.shared('simulation-spec');
    const a = JSON.stringify(await builder(shared).run(3));
    const b = JSON.stringify(await builder(shared).run(3));
    expect(b).toBe(a);
    expect(
      JSON.stringify(await builder(RetryBudget.of({ fraction: 0.1, minimumPerSecond: 3 })).run(3)),
    ).toBe(a);
  });

  it('refuses an incomplete description or a bad seed, naming the field', async () => {
    const builder = Simulate.policy(Resilience.default);
    await expect(builder.run(1)).rejects.toThrow('dependency: undefined is invalid: is required');
    await expect(
      builder
        .against(Dependency.healthy({ p50: 1, p99: 1 }))
        .for(10)
        .run(1),
    ).rejects.toThrow('load');
    await expect(golden().run(-1)).rejects.toThrow(PolicyConfigError);
    await expect(golden().run(1.5)).rejects.toThrow('seed: 1.5 is invalid');
    expect(() => builder.for(0)).toThrow('duration: 0 is invalid');
    expect(() => Simulate.policy({} as never)).toThrow('policy');
  });

  it('refuses bad run options and durations with the field, the value and the rule', async () => {
    await expect(golden().run(2 ** 32)).rejects.toThrow(
      'seed: 4294967296 is invalid: must be an integer in [0, 4294967295]',
    );
    await expect(golden().run(1, { progressEvery: 0 })).rejects.toThrow(
      'progressEvery: 0 is invalid: must be a duration in ms > 0 (or Infinity)',
    );
    await expect(golden().run(1, { progressEvery: null as never })).rejects.toThrow(
      'progressEvery: null is invalid: must be a duration in ms > 0 (or Infinity)',
    );
    await expect(golden().run(1, { drainLimit: -1 })).rejects.toThrow(
      'drainLimit: -1 is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
    await expect(golden().run(1, { drainLimit: Number.NaN })).rejects.toThrow(
      'drainLimit: NaN is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
    expect(() => Simulate.policy(Resilience.default).for(Infinity)).toThrow(
      'duration: Infinity is invalid: must be a finite duration in ms > 0',
    );
  });

  it('reports progress in simulated time', async () => {
    const seen: number[] = [];
    await golden().run(42, {
      onProgress: (at, total) => seen.push(at / total),
      progressEvery: 2500,
    });
    expect(seen).toEqual([0.3, 0.6, 0.9, 1]);
  });

  const breakerLanded = 'breaker' in DEFAULT_OPTIONS;
  (breakerLanded ? it : it.skip)(
    'counts breaker opens from events and samples its state per second',
    async () => {
      const report = await Simulate.policy(
        Resilience.default.with({ breaker: Breaker.default } as unknown as PolicyOptions),
      )
        .against(Dependency.healthy({ p50: 10, p99: 30 }).outage({ after: 2000, lasting: 3000 }))
        .under(Load.constant({ perSecond: 100 }))
        .for(30_000)
        .run(7);
      expect(report.breakerOpens).toBeGreaterThanOrEqual(1);
      const states = report.perSecond.map((s) => s.breakerState);
      expect(states[0]).toBe('closed');
      expect(states).toContain('open');
      expect(states[states.length - 1]).toBe('closed');
    },
  );
});

describe('simulation sources', () => {
  const here = dirname(fileURLToPath(import.meta.url));
  const sources = readdirSync(here).filter(
    (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'),
  );
  it.each(sources)(
    '%s imports only core, the testing kit and relative files, with .js suffixes; never real time',
    (name) => {
      const text = readFileSync(join(here, name), 'utf8');
      for (const [, path] of text.matchAll(/from '([^']+)'/g)) {
        expect(
          path!.startsWith('./') ||
            path!.startsWith('../../core/') ||
            /^\.\.\/[\w-]+\.js$/.test(path!),
        ).toBe(true);
        expect(path!.endsWith('.js')).toBe(true);
      }
      expect(text).not.toMatch(
        /Date\.now|\bsetTimeout\s*\(|AbortSignal\.timeout|Math\.random|@nestjs\//,
      );
    },
  );
});
