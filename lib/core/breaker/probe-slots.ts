import type { Clock } from '../time/clock.js';
import type { TimerHandle } from '../time/timer-heap.js';

/** Slack (ms) when matching a probe record to a held probe by its start time. */
const PROBE_MATCH_TOLERANCE = 1;

/**
 * The half-open probe slots of a circuit breaker (DESIGN §3.6): which probes are held, since when,
 * and the timer that frees each one if its attempt never settles. A slot comes back on every outcome.
 *
 * A probe freed early (by its timeout or a state change) may still report later, and an admission
 * carries no identity; so while such orphans exist a settling record is matched by when its attempt
 * started: one that started more than 1 ms before every probe now held is that late report.
 */
export class ProbeSlots {
  // Held probes in admission order: when each was admitted (ms) and its release timer.
  private readonly admittedAt: number[] = [];
  private readonly timers: TimerHandle[] = [];
  // Probes freed (by timeout or a state change) whose records may still arrive.
  private orphans = 0;

  /**
   * @param clock the breaker's clock (release timers)
   * @param onExpire called after a probe outlived its timeout and its slot came back
   */
  constructor(
    private readonly clock: Clock,
    private readonly onExpire: () => void,
  ) {}

  /** Slots held now. */
  get held(): number {
    return this.admittedAt.length;
  }

  /**
   * Ms from `now` until the first held slot comes back at the latest (its probe's timeout frees it if
   * the probe has not settled before); `Infinity` when no slot is held.
   */
  untilFirstRelease(now: number): number {
    let due = Infinity;
    for (const timer of this.timers) if (timer.due < due) due = timer.due;
    return due - now;
  }

  /** Holds a slot admitted at `now`, freed after `timeoutMs` if it has not settled by then. */
  hold(now: number, timeoutMs: number): void {
    this.admittedAt.push(now);
    // A closure per probe (rare, half-open only) so a timer frees exactly its own probe.
    const timer: TimerHandle = this.clock.setTimer(timeoutMs, () => this.expire(timer));
    this.timers.push(timer);
  }

  /**
   * Frees the slot of a probe that settled at `now` after `durationMs`.
   * @returns false when no slot is held or the record is the late report of a probe already freed
   */
  settle(now: number, durationMs: number): boolean {
    if (this.admittedAt.length === 0) return false;
    let index = 0;
    if (this.orphans > 0) {
      index = this.startedAt(now - (durationMs > 0 ? durationMs : 0));
      if (index < 0) {
        this.orphans--;
        return false;
      }
    }
    this.release(index);
    return true;
  }

  /** Frees every held slot; their late records will match no held probe. */
  dropAll(): void {
    for (const timer of this.timers) this.clock.clearTimer(timer);
    this.orphans += this.admittedAt.length;
    this.timers.length = 0;
    this.admittedAt.length = 0;
  }

  /** Releases held probe `index` and clears its timer. */
  private release(index: number): void {
    this.clock.clearTimer(this.timers[index]!);
    this.timers.splice(index, 1);
    this.admittedAt.splice(index, 1);
  }

  /** The held probe an attempt that started at `startedAt` belongs to (the latest admitted by then), or -1. */
  private startedAt(startedAt: number): number {
    const admitted = this.admittedAt;
    for (let i = admitted.length - 1; i >= 0; i--) {
      if (admitted[i]! <= startedAt + PROBE_MATCH_TOLERANCE) return i;
    }
    return -1;
  }

  /** Timer callback: a probe outlived its timeout; its slot comes back. */
  private expire(timer: TimerHandle): void {
    const index = this.timers.indexOf(timer);
    if (index < 0) return;
    this.release(index);
    this.orphans++;
    this.onExpire();
  }
}
