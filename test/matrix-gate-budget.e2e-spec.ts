import { type Policy, Resilience, RetryBudget } from '../lib/core/index.js';
import {
  Dependency,
  Load,
  type MatrixCell,
  ScenarioMatrix,
  Simulate,
} from '../lib/testing/index.js';

/**
 * The retry budget as a gate (DESIGN §3.5), for `Resilience.default` and `Resilience.http` with
 * their default budget (the adaptive bucket) against the same policy without a budget ("none") and
 * with the static bucket (`RetryBudget.tokenBucket()`, "static"), seeds 1–2, 500 calls/s:
 * - independent failures with headroom (failing 1/10/30/50 %, two simulated minutes): availability ≥
 *   none − 1 point;
 * - retries that do not work: outage 30 s and 5 min, flapping, cold start against a dead dependency:
 *   load ≤ 1.1×; overload 1.5×: load ≤ 1.1× and availability ≥ static − 0.5 point; brownout: worst
 *   second ≤ 1.2× and availability ≥ static's (75.02 / 75.13 %);
 * - low traffic: a dead dependency at 2 calls/s for a minute gets ≤ 1.5 requests per call, alone and
 *   at the bottom of a 3-hop chain.
 */
const SEEDS = [1, 2];
const FAILING = ['failing-1', 'failing-10', 'failing-30', 'failing-50'];
const STORMS = ['outage-30s', 'outage-5m', 'flapping', 'cold-start-dead'];
const PRESETS = { default: Resilience.default, http: Resilience.http } as const;

/** A variant's cells, by scenario and seed. */
type Cells = { cell(scenario: string, variant: 'policy', seed: number): MatrixCell };

interface Runs {
  readonly policy: Cells;
  readonly none: Cells;
  readonly fixed: Cells;
}

const runs = new Map<string, Runs>();

/** Runs `policy` over `groups` of scenarios ([scenarios, cap in ms]), one matrix per group, and looks cells up across them. */
async function cells(policy: Policy, groups: [string[], number | undefined][]): Promise<Cells> {
  const byScenario = new Map<string, Cells>();
  for (const [scenarios, maximumDuration] of groups) {
    const report = await ScenarioMatrix.run(policy, {
      seeds: SEEDS,
      variants: ['policy'],
      scenarios,
      maximumDuration,
    });
    for (const scenario of scenarios) byScenario.set(scenario, report);
  }
  return {
    cell: (scenario, variant, seed) => byScenario.get(scenario)!.cell(scenario, variant, seed),
  };
}

async function matrices(policy: Policy): Promise<Runs> {
  const compared = ['overload', 'brownout'];
  return {
    // The steady failing scenarios are the same every minute: at most two simulated minutes each
    // (failing-50's own length; a cold bucket's first second, static, weighs double in one minute).
    policy: await cells(policy, [
      [FAILING, 120_000],
      [STORMS, undefined],
      [compared, undefined],
    ]),
    none: await cells(policy.with({ budget: RetryBudget.none }), [[FAILING, 120_000]]),
    fixed: await cells(policy.with({ budget: RetryBudget.tokenBucket() }), [[compared, undefined]]),
  };
}

beforeAll(async () => {
  for (const [name, policy] of Object.entries(PRESETS)) runs.set(name, await matrices(policy));
}, 300_000);

const pct = (x: number) => (x * 100).toFixed(2);

describe.each(Object.keys(PRESETS))(
  'matrix gate: the default retry budget of Resilience.%s',
  (preset) => {
    it.each(FAILING)('%s: availability ≥ no budget − 1 point, every seed', (scenario) => {
      const { policy, none } = runs.get(preset)!;
      const below = SEEDS.filter(
        (seed) =>
          policy.cell(scenario, 'policy', seed).availability <
          none.cell(scenario, 'policy', seed).availability - 0.01,
      );
      expect(
        below.map(
          (seed) =>
            `seed ${seed}: ${pct(policy.cell(scenario, 'policy', seed).availability)} < ${pct(none.cell(scenario, 'policy', seed).availability)} − 1`,
        ),
      ).toEqual([]);
    });

    it.each(STORMS)('%s: load ≤ 1.1×, every seed', (scenario) => {
      const { policy } = runs.get(preset)!;
      expect(
        SEEDS.map((seed) => [seed, policy.cell(scenario, 'policy', seed).loadMultiplier <= 1.1]),
      ).toEqual(SEEDS.map((seed) => [seed, true]));
    });

    it('overload 1.5×: load ≤ 1.1× and availability ≥ the static bucket’s − 0.5 point, every seed', () => {
      const { policy, fixed } = runs.get(preset)!;
      for (const seed of SEEDS) {
        const on = policy.cell('overload', 'policy', seed);
        expect(on.loadMultiplier).toBeLessThanOrEqual(1.1);
        expect(on.availability).toBeGreaterThanOrEqual(
          fixed.cell('overload', 'policy', seed).availability - 0.005,
        );
      }
    });

    it('brownout (8× slower for 60 s): worst second ≤ 1.2× and availability ≥ the static bucket’s, every seed', () => {
      const { policy, fixed } = runs.get(preset)!;
      for (const seed of SEEDS) {
        const on = policy.cell('brownout', 'policy', seed);
        expect(on.worstSecond).toBeLessThanOrEqual(1.2);
        expect(on.availability).toBeGreaterThanOrEqual(
          fixed.cell('brownout', 'policy', seed).availability,
        );
        expect(on.availability).toBeGreaterThanOrEqual(0.75);
      }
    });

    it('a dead dependency at 2 calls/s for a minute: ≤ 1.5 requests per call, alone and at the bottom of a 3-hop chain', async () => {
      const policy = PRESETS[preset as keyof typeof PRESETS];
      const dead = Dependency.healthy({ p50: 20, p99: 200 }).failing(1);
      const load = Load.constant({ perSecond: 2 });
      for (const seed of SEEDS) {
        const alone = await Simulate.policy(policy).against(dead).under(load).for(60_000).run(seed);
        expect(alone.loadMultiplier).toBeLessThanOrEqual(1.5);
        const chain = await Simulate.chain([policy, policy, policy])
          .against(dead)
          .under(load)
          .for(60_000)
          .run(seed);
        expect(chain.bottomAmplification).toBeLessThanOrEqual(1.5);
      }
      // Is a real gate: the static bucket's floor (30 tokens, 3/s) dominates at this rate.
      const fixed = await Simulate.policy(
        Resilience.default.with({ budget: RetryBudget.tokenBucket() }),
      )
        .against(dead)
        .under(load)
        .for(60_000)
        .run(1);
      expect(fixed.loadMultiplier).toBeGreaterThan(2.5);
    });
  },
);
