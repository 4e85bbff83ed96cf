import type { Phase, PhaseName } from './scenario.js';

/**
 * The run's shared clock: the dependency, the load driver and the reporter all file what they see
 * under the same second index, so "calls in second 7" and "requests the dependency got in second 7"
 * are comparable. Uses `performance.now()` (monotonic), which is fine outside `lib/`.
 */
export class Timeline {
  private startedAt: number | undefined;

  constructor(readonly phases: readonly Phase[]) {}

  /** Starts the clock; until then everything is filed under second 0 and the phase is the first one. */
  start(): void {
    this.startedAt = performance.now();
  }

  /** Milliseconds since {@link Timeline.start}, 0 before it. */
  elapsed(): number {
    return this.startedAt === undefined ? 0 : performance.now() - this.startedAt;
  }

  /** The index of the current second. */
  second(): number {
    return Math.floor(this.elapsed() / 1000);
  }

  /** The phase second `index` belongs to; seconds after the last phase are `drain`. */
  phaseOfSecond(index: number): PhaseName | 'drain' {
    let end = 0;
    for (const phase of this.phases) {
      end += phase.seconds;
      if (index < end) return phase.name;
    }
    return 'drain';
  }

  /** The phase now. The dependency keeps its last phase's behaviour while the run drains. */
  phase(): PhaseName {
    const phase = this.phaseOfSecond(this.second());
    return phase === 'drain' ? this.phases[this.phases.length - 1]!.name : phase;
  }
}

/** A count per second index. */
export class PerSecond {
  private readonly counts: number[] = [];

  /** Adds `amount` to second `index`. */
  add(index: number, amount = 1): void {
    this.counts[index] = (this.counts[index] ?? 0) + amount;
  }

  /** The count of second `index` (0 when nothing was filed there). */
  at(index: number): number {
    return this.counts[index] ?? 0;
  }

  /** Forgets every count. */
  clear(): void {
    this.counts.length = 0;
  }

  /** One past the last second that has a count. */
  get length(): number {
    return this.counts.length;
  }

  /** Sum over all seconds. */
  total(): number {
    let sum = 0;
    for (const count of this.counts) sum += count ?? 0;
    return sum;
  }
}
