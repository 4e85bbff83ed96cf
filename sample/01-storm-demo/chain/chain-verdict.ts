import {
  DEFAULT_LIMITS,
  type Distortion,
  type Verdict,
  type VerdictKind,
  type VerdictLimits,
  blame,
  distortionVerdict,
  lateLoop,
} from '../verdict.js';
import { percent } from '../report.js';
import type { ChainPhaseSummary, ChainSummary } from './chain-summary.js';

/** Where act 2's verdict draws its lines (the machine check's are act 1's). */
export interface ChainLimits {
  /** Most database requests per frontend call with the database down, the library's defaults. */
  readonly maxDefaultsDown: number;
  /** Least database requests per frontend call with the database down, naive retries. */
  readonly minNaiveDown: number;
  /** Most database requests per frontend call in a healthy phase, both configurations (1.00 to two places). */
  readonly maxHealthy: number;
}

/**
 * The claim's lines for `hops` services of `attempts` attempts: the defaults at most 1.3 database
 * requests per call with the database down; naive retries at least three quarters of attempts^hops
 * (20 of 27 for three hops of three: the storm, with room for calls the load driver abandoned and
 * the backoffs of the phase's last calls cut off by the next phase); healthy phases 1.00.
 */
export function chainLimits(hops: number, attempts: number): ChainLimits {
  return {
    maxDefaultsDown: 1.3,
    minNaiveDown: Math.floor(0.75 * attempts ** hops),
    maxHealthy: 1.005,
  };
}

const phase = (run: ChainSummary, name: string): ChainPhaseSummary | undefined =>
  run.phases.find((p) => p.phase === name);

/**
 * Judges act 2 as act 1 is judged: first whether every process of both configurations got the CPU
 * it needed (the frontend answering at least `minHealthyAvailability` of its calls in the first
 * healthy phase, each process's event loop on time; distortions put down to the machine or to the
 * process by its CPU wait, as in act 1), then the claim: naive retries multiply per hop, the
 * defaults do not, and a healthy database gets one request per call either way.
 */
export function judgeChain(
  naive: ChainSummary,
  defaults: ChainSummary,
  claim: ChainLimits,
  limits: VerdictLimits = DEFAULT_LIMITS,
): Verdict {
  const distortion: Distortion = { starved: [], broken: [] };
  for (const run of [naive, defaults]) {
    const label = run.mode === 'naive' ? 'naive retries' : 'library defaults';
    const healthy = run.phases[0]!;
    const waits = Object.values(run.machines).map((m) => m.cpuWaitShare);
    const wait = waits.some((w) => w === null) ? null : Math.max(...(waits as number[]));
    if (healthy.availability < limits.minHealthyAvailability) {
      blame(
        distortion,
        label,
        [
          `with the database healthy only ${percent(healthy.availability)} of frontend calls got a 2xx (a machine that keeps up answers at least ${percent(limits.minHealthyAvailability)})`,
        ],
        wait,
        limits,
      );
    }
    for (const [name, machine] of Object.entries(run.machines)) {
      const late = lateLoop(machine, limits);
      if (late !== undefined)
        blame(distortion, `${label}, ${name}`, [late], machine.cpuWaitShare, limits);
    }
  }
  const distorted = distortionVerdict(distortion);
  if (distorted !== undefined) return distorted;

  const failed: string[] = [];
  const passed: string[] = [];
  const check = (ok: boolean, text: string): void => void (ok ? passed : failed).push(text);
  const down = (run: ChainSummary): number => phase(run, 'database down')?.databasePerCall ?? NaN;
  check(
    down(defaults) <= claim.maxDefaultsDown,
    `with the database down the library's defaults sent it ${down(defaults).toFixed(2)} requests per frontend call (at most ${claim.maxDefaultsDown})`,
  );
  check(
    down(naive) >= claim.minNaiveDown,
    `naive retries sent it ${down(naive).toFixed(2)} (at least ${claim.minNaiveDown}: the storm)`,
  );
  for (const run of [naive, defaults]) {
    for (const p of run.phases.filter((p) => p.phase.startsWith('healthy'))) {
      check(
        p.databasePerCall <= claim.maxHealthy,
        `${run.mode === 'naive' ? 'naive retries' : 'library defaults'}, ${p.phase}: ${p.databasePerCall.toFixed(2)} database requests per call (1.00)`,
      );
    }
  }
  return failed.length > 0
    ? { kind: 'notHeld', reasons: failed }
    : { kind: 'held', reasons: passed };
}

/** The demo's verdict over both acts: the worse one (not held, then machine too slow, then held). */
export function worstKind(kinds: readonly VerdictKind[]): VerdictKind {
  if (kinds.includes('notHeld')) return 'notHeld';
  if (kinds.includes('machineTooSlow')) return 'machineTooSlow';
  return 'held';
}
