import { ManualClock, type TimerHandle } from '../../core/index.js';

/**
 * The simulator's clock (DESIGN §3.13, §8): time stands still until the driver jumps it to the next
 * due timer. Timers live in an indexed binary heap ordered by due time, then by the order they were
 * set, so two runs that set the same timers fire them in the same order.
 *
 * It never touches real time. {@link VirtualClock.fireDue} is the driver's step: jump to the earliest
 * due timer and fire every timer due at that instant (timers set for the same instant while firing
 * included). The driver lets promise continuations settle between steps.
 *
 * ```ts
 * const clock = new VirtualClock();
 * const policy = Resilience.default.with({ clock });
 * clock.setTimer(250, () => console.log(clock.now())); // 250 once fired
 * clock.fireDue(); // jumps to 250 and fires
 * ```
 */
export class VirtualClock extends ManualClock {
  /** Count of timers set or cleared so far: a cheap activity signal for the driver. */
  changes = 0;

  override setTimer(delay: number, callback: () => void): TimerHandle {
    this.changes++;
    return super.setTimer(delay, callback);
  }

  override clearTimer(handle: TimerHandle): void {
    this.changes++;
    super.clearTimer(handle);
  }

  /**
   * Jumps to the earliest pending timer's due time (never backwards) and fires every timer due at
   * that instant, in order, including timers set for that instant by the callbacks themselves.
   * A callback that throws does not stop the others; the first error is rethrown after the batch.
   * @param limit do nothing (and return `false`) when the earliest timer is due after `limit` ms
   * @returns whether any timer fired.
   */
  fireDue(limit = Infinity): boolean {
    const first = this.heap.peek();
    if (first === undefined || first.due > limit) return false;
    if (first.due > this.current) this.current = first.due;
    const now = this.current;
    let failure: unknown;
    let failed = false;
    for (let top = this.heap.takeDue(now); top !== undefined; top = this.heap.takeDue(now)) {
      try {
        top.callback();
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
    }
    if (failed) throw failure;
    return true;
  }

  /**
   * Moves time to `time` ms without firing anything (for the end of a run, once nothing is due
   * before it). Never moves backwards.
   * @throws RangeError when a pending timer is due before `time`.
   */
  jumpTo(time: number): void {
    const first = this.heap.peek();
    if (first !== undefined && first.due < time) {
      throw new RangeError(
        `VirtualClock.jumpTo(${time}): a timer is due at ${first.due}; fire it first`,
      );
    }
    if (time > this.current) this.current = time;
  }
}
