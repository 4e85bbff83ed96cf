import type { MachineLoad, MachineReading } from './machine.js';
import { type RunSummary, percent, times } from './report.js';

/**
 * What the demo concludes from its two runs:
 * - `held`: the machine kept up with both runs and the retry budget did what the demo claims;
 * - `notHeld`: the machine kept up, and the budget did not, or the app failed calls to the healthy
 *   dependency with the CPU it asked for (a finding about the library or the demo);
 * - `machineTooSlow`: a run did not get enough CPU for its numbers to say anything about the library.
 */
export type VerdictKind = 'held' | 'notHeld' | 'machineTooSlow';

/** The verdict, with the reasons printed under it. */
export interface Verdict {
  readonly kind: VerdictKind;
  /** One sentence per check that decided it. */
  readonly reasons: readonly string[];
}

/** Where the verdict draws its lines. */
export interface VerdictLimits {
  /**
   * Least healthy-phase 2xx share for a run to count. The healthy dependency fails nothing, so a
   * machine that keeps up answers about every call there.
   */
  readonly minHealthyAvailability: number;
  /**
   * Most event-loop delay (p99, ms) for a run to count: beyond it, answers, backoffs and timeouts
   * all run late by that much, and the dependency holds its capacity slots longer than it should.
   */
  readonly maxLoopDelayP99Ms: number;
  /**
   * Most requests per call the dependency may get during its degraded phase with the budget on.
   * Bound from the scenario (see `scenario.ts`): 1 + (30 + 3·T)/(R·T) + 0.1 is at most 1.16 at the
   * quick run's T = 5 s, R = 150 calls/s; 1.2 leaves room for the retries of the phase's last calls.
   */
  readonly maxDegradedLoadWithBudget: number;
  /**
   * Least share of its ready time a distorted run's main thread must have waited for a CPU for the
   * machine to take the blame. Measured on the project's 2-core machine: 56-59 % at load average
   * 6-7 (runs that kept up), 91-92 % at load average 12 (runs that lost most healthy calls). A run
   * distorted while waiting less than half the time had CPU to spare for its own work.
   */
  readonly minCpuWaitShare: number;
}

/** The limits the demo uses. */
export const DEFAULT_LIMITS: VerdictLimits = {
  minHealthyAvailability: 0.95,
  maxLoopDelayP99Ms: 250,
  maxDegradedLoadWithBudget: 1.2,
  minCpuWaitShare: 0.5,
};

/** Exit code of each verdict (1 = the demo itself failed, 2 = watchdog, 3 = handles left open). */
export const EXIT_CODES: Readonly<Record<VerdictKind, number>> = {
  held: 0,
  notHeld: 4,
  machineTooSlow: 5,
};

/**
 * Judges the library by the two runs, after checking that each run measured the library rather
 * than the machine. A run whose healthy phase lost calls, or whose event loop ran late, is
 * distorted; it is put down to the machine when its main thread spent at least
 * `minCpuWaitShare` of its ready time waiting for a CPU (or when the system cannot tell), and
 * otherwise to the process itself — the app failed healthy calls with the CPU it asked for, which
 * is a failure, not an excuse. A starved run fails calls with the dependency healthy and cannot
 * send retries on time, so its load numbers are the machine's.
 */
export function judge(
  on: RunSummary,
  off: RunSummary,
  limits: VerdictLimits = DEFAULT_LIMITS,
): Verdict {
  const distortion: Distortion = { starved: [], broken: [] };
  for (const [label, run] of [
    ['budget on', on],
    ['budget off', off],
  ] as const) {
    const symptoms: string[] = [];
    if (run.healthyAvailability < limits.minHealthyAvailability) {
      symptoms.push(
        `with the dependency healthy only ${percent(run.healthyAvailability)} of calls got a 2xx (a machine that keeps up answers at least ${percent(limits.minHealthyAvailability)})`,
      );
    }
    const late = lateLoop(run.machine, limits);
    if (late !== undefined) symptoms.push(late);
    blame(distortion, label, symptoms, run.machine.cpuWaitShare, limits);
  }
  const distorted = distortionVerdict(distortion);
  if (distorted !== undefined) return distorted;

  const failed: string[] = [];
  const passed: string[] = [];
  const check = (ok: boolean, text: string): void => void (ok ? passed : failed).push(text);
  check(
    on.degradedLoadMultiplier <= limits.maxDegradedLoadWithBudget,
    `with the budget on the dependency got ${times(on.degradedLoadMultiplier)} its calls while degraded (at most ${times(limits.maxDegradedLoadWithBudget)})`,
  );
  check(
    off.degradedLoadMultiplier > on.degradedLoadMultiplier,
    `with the budget off it got ${times(off.degradedLoadMultiplier)} (more than with it on)`,
  );
  check(
    on.worstSecond < off.worstSecond,
    `worst second: ${times(on.worstSecond)} with the budget on, ${times(off.worstSecond)} off (lower with it on)`,
  );
  return failed.length > 0
    ? { kind: 'notHeld', reasons: failed }
    : { kind: 'held', reasons: passed };
}

/** A run's distortions so far: those put down to the machine, and those put down to the process itself. */
export interface Distortion {
  readonly starved: string[];
  readonly broken: string[];
}

/** The symptom of a reading whose event loop ran later than the timings allow, if it did. */
export function lateLoop(machine: MachineReading, limits: VerdictLimits): string | undefined {
  if (machine.loopDelayP99Ms <= limits.maxLoopDelayP99Ms) return undefined;
  return `the event loop ran ${Math.round(machine.loopDelayP99Ms)} ms late (p99; at most ${limits.maxLoopDelayP99Ms} ms for the timings to hold)`;
}

/**
 * Files `symptoms` of `label` under the machine when the process waited for a CPU at least
 * `minCpuWaitShare` of its ready time (or the system cannot tell), else under the process itself.
 */
export function blame(
  into: Distortion,
  label: string,
  symptoms: readonly string[],
  wait: number | null,
  limits: VerdictLimits,
): void {
  if (symptoms.length === 0) return;
  if (wait === null) into.starved.push(...symptoms.map((text) => `${label}: ${text}`));
  else if (wait >= limits.minCpuWaitShare)
    into.starved.push(
      ...symptoms.map(
        (text) =>
          `${label}: ${text}; it waited for a CPU ${percent(wait)} of the time it was ready to run`,
      ),
    );
  else
    into.broken.push(
      ...symptoms.map(
        (text) =>
          `${label}: ${text}, yet it waited for a CPU only ${percent(wait)} of the time it was ready to run: the app, not the machine`,
      ),
    );
}

/** `notHeld` for a distortion that is the process's, `machineTooSlow` for one that is the machine's, else `undefined`. */
export function distortionVerdict(distortion: Distortion): Verdict | undefined {
  if (distortion.broken.length > 0) return { kind: 'notHeld', reasons: distortion.broken };
  if (distortion.starved.length > 0) return { kind: 'machineTooSlow', reasons: distortion.starved };
  return undefined;
}

/**
 * The verdict as the demo prints it, with the machine's load for a too-slow one.
 * @param claim what held, for a `held` verdict (act 1's by default)
 */
export function verdictText(
  verdict: Verdict,
  load: MachineLoad,
  claim = 'the retry budget held',
): string {
  const head = {
    held: `verdict: ${claim}`,
    notHeld:
      'verdict: NOT held — on a machine that kept up, the library or the demo failed a check',
    machineTooSlow:
      `verdict: none — this machine was too slow for the numbers above to mean anything (load average ${load.loadAverage} on ${load.cores} cores). ` +
      'They measure the machine, not the library; run the demo again when the machine is less busy',
  }[verdict.kind];
  return [head, ...verdict.reasons.map((reason) => `  - ${reason}`)].join('\n');
}
