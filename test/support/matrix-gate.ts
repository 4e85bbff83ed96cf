import type { MatrixCell, MatrixReport } from '../../lib/testing/index.js';

/** Seeds every matrix gate runs (issue 8: at least three, every one must pass). */
export const GATE_SEEDS = [1, 2, 3] as const;

/** A gate rule: a violation message for one seed's policy cell against its breaker-off cell, or undefined. */
export type GateRule = (on: MatrixCell, off: MatrixCell) => string | undefined;

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;

/** Availability no lower than breaker-off's minus `points` (percentage points), same seed. */
export const availabilityWithin =
  (points: number): GateRule =>
  (on, off) =>
    on.availability >= off.availability - points / 100
      ? undefined
      : `availability ${pct(on.availability)} < breaker off ${pct(off.availability)} − ${points} points`;

/** Attempts reaching the dependency during the fault at most `1/divisor` of breaker-off's. */
export const faultAttemptsCut =
  (divisor: number): GateRule =>
  (on, off) =>
    on.faultAttempts! * divisor <= off.faultAttempts!
      ? undefined
      : `attempts during the fault ${on.faultAttempts} > breaker off's ${off.faultAttempts} / ${divisor}`;

/** Back to ≥ 99 % of pre-fault availability within `ms` of the fault's end. */
export const recoversWithin =
  (ms: number): GateRule =>
  (on) =>
    typeof on.timeToRecover === 'number' && on.timeToRecover <= ms
      ? undefined
      : `time to recover ${String(on.timeToRecover)} > ${ms} ms`;

/** The breaker never opened. */
export const neverOpens: GateRule = (on) =>
  on.breakerOpens === 0 ? undefined : `${on.breakerOpens} breaker opens`;

/**
 * Every violation of `rules` in `scenario`, one line per seed and rule (`[]` when the gate holds):
 * the assertion compares the list with `[]`, so a failure names the scenario, seed and numbers.
 */
export function violations(matrix: MatrixReport, scenario: string, ...rules: GateRule[]): string[] {
  const found: string[] = [];
  for (const seed of matrix.seeds) {
    const on = matrix.cell(scenario, 'policy', seed);
    const off = matrix.cell(scenario, 'breakerOff', seed);
    for (const rule of rules) {
      const message = rule(on, off);
      if (message !== undefined) found.push(`${scenario}, seed ${seed}: ${message}`);
    }
  }
  return found;
}
