import { readFileSync } from 'node:fs';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { availableParallelism, loadavg } from 'node:os';

/** How much of the machine one run got: the numbers that say whether the run measured the library or the machine. */
export interface MachineReading {
  /** 99th percentile of how late the process's event loop ran, ms (timers, backoffs and answers are that late). */
  readonly loopDelayP99Ms: number;
  /** The longest the event loop was held up, ms. */
  readonly loopDelayMaxMs: number;
  /** CPU time the process used per second of the run (1 = one core busy all the time). */
  readonly cpuPerSecond: number;
  /**
   * Share of the time the process's main thread was ready to run that it spent waiting for a CPU
   * (Linux's run-queue wait, `/proc/thread-self/schedstat`), 0..1; `null` where the system does not
   * tell. High only when other processes hold the cores: the app's own work, however heavy, runs.
   */
  readonly cpuWaitShare: number | null;
}

// The sampling period of the delay histogram, ms: fine enough for the 20 ms answers and 25 ms backoffs.
const RESOLUTION_MS = 10;

/**
 * Measures, over one run, how late the event loop ran and how much CPU the process used. The app,
 * the load driver and the dependency share this one loop, so when the machine does not give the
 * process enough CPU every answer, backoff and timeout runs late by about the loop delay.
 */
export class MachineMeter {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({
    resolution: RESOLUTION_MS,
  });
  private startedAt = 0;
  private cpuAtStart: NodeJS.CpuUsage = { user: 0, system: 0 };
  private schedAtStart: Sched | undefined;

  /** Starts measuring (from the start of the run's load). */
  start(): void {
    this.histogram.reset();
    this.histogram.enable();
    this.startedAt = performance.now();
    this.cpuAtStart = process.cpuUsage();
    this.schedAtStart = sched();
  }

  /** Stops measuring and returns the reading (its own timer is stopped, so nothing stays open). */
  stop(): MachineReading {
    this.histogram.disable();
    const seconds = (performance.now() - this.startedAt) / 1000;
    const cpu = process.cpuUsage(this.cpuAtStart);
    const before = this.schedAtStart;
    const after = sched();
    const ran = before !== undefined && after !== undefined ? after.runNs - before.runNs : 0;
    const waited = before !== undefined && after !== undefined ? after.waitNs - before.waitNs : 0;
    return {
      // The histogram counts the delay beyond its own period, in ns; an empty one reads 0.
      loopDelayP99Ms: round(this.histogram.count === 0 ? 0 : this.histogram.percentile(99) / 1e6),
      loopDelayMaxMs: round(this.histogram.count === 0 ? 0 : this.histogram.max / 1e6),
      cpuPerSecond: round(seconds <= 0 ? 0 : (cpu.user + cpu.system) / 1e6 / seconds),
      cpuWaitShare:
        before === undefined || after === undefined
          ? null
          : round(ran + waited === 0 ? 0 : waited / (ran + waited)),
    };
  }
}

/** The calling thread's scheduler counters: time on a CPU and time waiting in the run queue, ns. */
interface Sched {
  readonly runNs: number;
  readonly waitNs: number;
}

function sched(): Sched | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return run === undefined || wait === undefined || Number.isNaN(run) || Number.isNaN(wait)
      ? undefined
      : { runNs: run, waitNs: wait };
  } catch {
    // Not Linux (or no procfs): the verdict falls back on the event-loop delay alone.
    return undefined;
  }
}

/** The machine as the demo found it: 1-minute load average and cores, for the verdict's wording. */
export interface MachineLoad {
  readonly loadAverage: number;
  readonly cores: number;
}

/** The load average and core count now. */
export function machineLoad(): MachineLoad {
  return { loadAverage: round(loadavg()[0] ?? 0), cores: availableParallelism() };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
