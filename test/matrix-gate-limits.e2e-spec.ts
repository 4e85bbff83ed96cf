import { Limit, Resilience } from '../lib/core/index.js';
import {
  MATRIX_SCENARIOS,
  type MatrixCell,
  type MatrixReport,
  ScenarioMatrix,
} from '../lib/testing/index.js';
import { GATE_SEEDS } from './support/matrix-gate.js';

/**
 * The scenario matrix as the concurrency limit's gate (DESIGN §3.8/§8.1): `Resilience.http` with
 * `Limit.adaptive()` against the same policy without it (`limitOff`), 500 calls/s, seeds 1–3.
 * - Healthy, slow, and failing 1 % and 10 % (one simulated minute each): the limit changes nothing a
 *   caller sees — availability ≥ without − 0.1 point, and no call refused while healthy or slow.
 * - Overloaded 3× (an unbounded queue, a 150 ms timeout that counts queue time): successful calls per
 *   second ≥ 95 % of the dependency's capacity and the p99 of admitted calls ≤ 2 × the healthy p99
 *   (the same seed's policy without a limit); a dependency slowing with its own queue
 *   (`queue-latency`): at least 1.5 × the successful calls without the limit.
 * - The hold (docs/limits.md, "Per attempt or per call"): a slot held per attempt against the same
 *   limit held per call (`limitPerCall`) — on `queue-latency` at least 1.25 × its successful calls,
 *   under overload 3× an admitted p99 at most 0.75 × its own. Either fails when the library's hold
 *   is switched to per call (the two rows are then the same).
 */
const STEADY = ['failing-1', 'failing-10'];
const WINDOWED = ['healthy', 'slow'];
const OVERLOADED = ['overload-3x', 'queue-latency'];
const adaptive = Resilience.http.with({ name: 'adaptive', limit: Limit.adaptive() });
const options = { seeds: [...GATE_SEEDS], variants: ['policy', 'limitOff'] as const };
let steady: MatrixReport;
let windowed: MatrixReport;
let overloaded: MatrixReport;

/** What one seed's cell must hold, against the same seed without the limit; a message when it does not. */
type Rule = (on: MatrixCell, off: MatrixCell) => string | undefined;

function broken(matrix: MatrixReport, scenario: string, rule: Rule): string[] {
  return matrix.seeds.flatMap((seed) => {
    const message = rule(
      matrix.cell(scenario, 'policy', seed),
      matrix.cell(scenario, 'limitOff', seed),
    );
    return message === undefined ? [] : [`${scenario}, seed ${seed}: ${message}`];
  });
}

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
const capacity = (scenario: string) =>
  MATRIX_SCENARIOS.find((s) => s.name === scenario)!.capacity!(500);

beforeAll(async () => {
  steady = await ScenarioMatrix.run(adaptive, {
    ...options,
    scenarios: STEADY,
    maximumDuration: 60_000,
  });
  windowed = await ScenarioMatrix.run(adaptive, { ...options, scenarios: WINDOWED });
  overloaded = await ScenarioMatrix.run(adaptive, {
    ...options,
    variants: [...options.variants, 'limitPerCall'],
    scenarios: OVERLOADED,
  });
}, 600_000);

describe('matrix gate: the adaptive limit where nothing is overloaded', () => {
  it.each([...WINDOWED, ...STEADY])(
    '%s: availability ≥ without the limit − 0.1 point',
    (scenario) => {
      const matrix = STEADY.includes(scenario) ? steady : windowed;
      expect(
        broken(matrix, scenario, (on, off) =>
          on.availability >= off.availability - 0.001
            ? undefined
            : `availability ${pct(on.availability)} < without ${pct(off.availability)} − 0.1 point`,
        ),
      ).toEqual([]);
    },
  );

  it.each(WINDOWED)('%s: no call refused by the limit', (scenario) => {
    expect(
      broken(windowed, scenario, (on) =>
        on.limited === 0 ? undefined : `${pct(on.limited!)} of calls limited`,
      ),
    ).toEqual([]);
  });
});

describe('matrix gate: the adaptive limit under overload', () => {
  it('overload-3x: successful calls per second ≥ 95 % of capacity, admitted p99 ≤ 2 × the healthy p99, every seed', () => {
    const target = capacity('overload-3x');
    expect(
      broken(overloaded, 'overload-3x', (on) => {
        const problems: string[] = [];
        const healthy = windowed.cell('healthy', 'limitOff', on.seed).p99;
        if (on.goodput < 0.95 * target)
          problems.push(`${on.goodput.toFixed(1)} calls/s < 95 % of ${target.toFixed(1)}`);
        if (on.admittedP99 > 2 * healthy)
          problems.push(
            `admitted p99 ${on.admittedP99.toFixed(0)} ms > 2 × healthy ${healthy.toFixed(0)} ms`,
          );
        return problems.length === 0 ? undefined : problems.join('; ');
      }),
    ).toEqual([]);
  });

  it('queue-latency: successful calls per second ≥ 1.5 × without the limit, every seed', () => {
    expect(
      broken(overloaded, 'queue-latency', (on, off) =>
        on.goodput >= 1.5 * off.goodput
          ? undefined
          : `${on.goodput.toFixed(1)} successful calls/s < 1.5 × ${off.goodput.toFixed(1)} without`,
      ),
    ).toEqual([]);
  });
});

describe('matrix gate: a slot per attempt against a slot per call', () => {
  /** What one seed's per-attempt cell must hold against the same seed's per-call cell. */
  const againstPerCall = (scenario: string, rule: Rule) =>
    overloaded.seeds.flatMap((seed) => {
      const message = rule(
        overloaded.cell(scenario, 'policy', seed),
        overloaded.cell(scenario, 'limitPerCall', seed),
      );
      return message === undefined ? [] : [`${scenario}, seed ${seed}: ${message}`];
    });

  it('queue-latency: successful calls per second ≥ 1.25 × the same limit held per call, every seed', () => {
    expect(
      againstPerCall('queue-latency', (attempt, call) =>
        attempt.goodput >= 1.25 * call.goodput
          ? undefined
          : `${attempt.goodput.toFixed(1)} calls/s < 1.25 × ${call.goodput.toFixed(1)} per call`,
      ),
    ).toEqual([]);
  });

  it('overload-3x: admitted p99 ≤ 0.75 × the same limit held per call, every seed', () => {
    expect(
      againstPerCall('overload-3x', (attempt, call) =>
        attempt.admittedP99 <= 0.75 * call.admittedP99
          ? undefined
          : `admitted p99 ${attempt.admittedP99.toFixed(0)} ms > 0.75 × ${call.admittedP99.toFixed(0)} ms per call`,
      ),
    ).toEqual([]);
  });
});
