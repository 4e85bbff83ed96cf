import type { DependencyServer } from './dependency-server.js';
import type { LoadResult } from './load-driver.js';
import type { MachineReading } from './machine.js';
import type { Timeline } from './timeline.js';

/** One run's outcome, as printed in the table and in `--json`. */
export interface RunSummary {
  /** Calls sent to `/checkout`. */
  readonly calls: number;
  /** Requests that reached the dependency (first attempts and retries). */
  readonly dependencyRequests: number;
  /** dependencyRequests / calls over the whole run. */
  readonly loadMultiplier: number;
  /**
   * The largest per-second ratio of requests the dependency received to calls that reached it (first
   * attempts), over seconds in which at least half the planned rate of calls arrived.
   */
  readonly worstSecond: number;
  /** Share of calls answered 2xx, 0..1 (the simulator's report uses the same unit). */
  readonly availability: number;
  /** Requests per call, over the calls that first reached the dependency during its degraded phase. */
  readonly degradedLoadMultiplier: number;
  /**
   * Share of the calls sent during the healthy phase that were answered 2xx, 0..1: the machine check.
   * The dependency then answers every request in about 20 ms and the policy never retries, so what is
   * lost there was lost to the machine, not to the library. The phase's last second is left out (when
   * it has more than one): calls sent at its very end reach a dependency that has already degraded.
   */
  readonly healthyAvailability: number;
  /** How much of the machine the run got. */
  readonly machine: MachineReading;
}

/** Everything a run recorded. */
export interface RunRecord {
  readonly load: LoadResult;
  readonly dependency: Pick<DependencyServer, 'received' | 'calls' | 'seen'>;
  readonly timeline: Timeline;
  /** Planned calls per second, to tell a full second from the ragged edges of the run. */
  readonly rate: number;
  readonly machine: MachineReading;
}

/** Computes the summary of one run. */
export function summarize(run: RunRecord): RunSummary {
  const { load, dependency, timeline } = run;
  const calls = load.sent.total();
  const dependencyRequests = dependency.received.total();
  let worstSecond = 0;
  for (let s = 0; s < dependency.received.length; s++) {
    const arrived = dependency.calls.at(s);
    // A second with few calls (the tail of the run) would turn a handful of late retries into a huge ratio.
    if (arrived >= run.rate / 2)
      worstSecond = Math.max(worstSecond, dependency.received.at(s) / arrived);
  }
  let degradedCalls = 0;
  let degradedRequests = 0;
  for (const call of dependency.seen.values()) {
    if (timeline.phaseOfSecond(call.second) !== 'degraded') continue;
    degradedCalls++;
    degradedRequests += call.requests;
  }
  return {
    calls,
    dependencyRequests,
    loadMultiplier: round(ratio(dependencyRequests, calls), 3),
    worstSecond: round(worstSecond, 3),
    availability: round(ratio(load.succeeded.total(), calls), 4),
    degradedLoadMultiplier: round(ratio(degradedRequests, degradedCalls), 3),
    healthyAvailability: round(healthyAvailability(run), 4),
    machine: run.machine,
  };
}

function healthyAvailability({ load, timeline }: RunRecord): number {
  const first = timeline.phases[0];
  if (first?.name !== 'healthy') return 0;
  const seconds = first.seconds > 1 ? first.seconds - 1 : first.seconds;
  let sent = 0;
  let succeeded = 0;
  for (let s = 0; s < seconds; s++) {
    sent += load.sent.at(s);
    succeeded += load.succeeded.at(s);
  }
  return ratio(succeeded, sent);
}

/** The line printed for one finished second. */
export function secondLine(
  label: string,
  run: RunRecord,
  second: number,
  utilization: number | undefined,
): string {
  const sent = run.load.sent.at(second);
  const received = run.dependency.received.at(second);
  const arrived = run.dependency.calls.at(second);
  const budget =
    utilization === undefined ? ' off' : `${Math.round(utilization * 100)}%`.padStart(4);
  return [
    label.padEnd(10),
    `t=${String(second + 1).padStart(2)}s`,
    run.timeline.phaseOfSecond(second).padEnd(9),
    `calls/s ${String(sent).padStart(4)}`,
    `dependency/s ${String(received).padStart(4)} (retries ${String(received - arrived).padStart(3)})`,
    `x${arrived === 0 ? '  -  ' : ratio(received, arrived).toFixed(2)}`,
    `2xx ${sent === 0 ? '  - ' : `${Math.round(100 * ratio(run.load.succeeded.at(second), sent))}%`.padStart(4)}`,
    `budget used ${budget}`,
  ].join('  ');
}

/** The closing comparison table. */
export function table(
  on: RunSummary,
  off: RunSummary,
  extra: { on: RunExtras; off: RunExtras },
): string {
  const rows: [string, string, string][] = [
    ['', 'budget on', 'budget off'],
    ['calls to /checkout', String(on.calls), String(off.calls)],
    ['requests the dependency got', String(on.dependencyRequests), String(off.dependencyRequests)],
    ['load multiplier', times(on.loadMultiplier), times(off.loadMultiplier)],
    [
      '  during the degraded phase',
      times(on.degradedLoadMultiplier),
      times(off.degradedLoadMultiplier),
    ],
    ['worst-second amplification', times(on.worstSecond), times(off.worstSecond)],
    ['availability (2xx)', percent(on.availability), percent(off.availability)],
    ['  502: payments failed, retries spent', count(extra.on, '502'), count(extra.off, '502')],
    ['  503: retry refused by the budget', count(extra.on, '503'), count(extra.off, '503')],
    ['  any other failure', other(extra.on), other(extra.off)],
    ['shed by the dependency (at capacity)', String(extra.on.shed), String(extra.off.shed)],
    ['calls skipped by the driver (cap)', String(extra.on.skipped), String(extra.off.skipped)],
    [
      'machine check: healthy-phase 2xx',
      percent(on.healthyAvailability),
      percent(off.healthyAvailability),
    ],
    ['  event-loop delay p99 / max', delays(on.machine), delays(off.machine)],
    ['  CPU used (cores)', on.machine.cpuPerSecond.toFixed(2), off.machine.cpuPerSecond.toFixed(2)],
    ['  waiting for a CPU (run queue)', waiting(on.machine), waiting(off.machine)],
  ];
  return rows
    .map(([name, a, b]) => `${name.padEnd(38)}${a.padStart(12)}${b.padStart(12)}`)
    .join('\n');
}

/** Counts shown in the table but not part of the JSON summary. */
export interface RunExtras {
  readonly shed: number;
  readonly skipped: number;
  /** Answers by status code (`error` for a failed or abandoned call). */
  readonly statuses: ReadonlyMap<string, number>;
}

function count(extras: RunExtras, status: string): string {
  return String(extras.statuses.get(status) ?? 0);
}

function other(extras: RunExtras): string {
  let sum = 0;
  for (const [status, n] of extras.statuses)
    if (!status.startsWith('2') && status !== '502' && status !== '503') sum += n;
  return String(sum);
}

function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** A 0..1 share as a percentage with one decimal, e.g. `72.2%`. */
export function percent(share: number): string {
  return `${(100 * share).toFixed(1)}%`;
}

function waiting(machine: MachineReading): string {
  return machine.cpuWaitShare === null ? 'n/a' : percent(machine.cpuWaitShare);
}

function delays(machine: MachineReading): string {
  return `${Math.round(machine.loopDelayP99Ms)}/${Math.round(machine.loopDelayMaxMs)} ms`;
}

/** A multiplier with two decimals, e.g. `1.05x`. */
export function times(value: number): string {
  return `${value.toFixed(2)}x`;
}
