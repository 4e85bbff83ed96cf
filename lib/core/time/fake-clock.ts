import { DELAY_RULE } from '../rules/option-rules.js';
import { ManualClock } from './manual-clock.js';

/**
 * A clock that moves only when told: the clock for every unit test (DESIGN §3.13, §8).
 *
 * ```ts
 * const clock = new FakeClock();
 * const call = Resilience.default.with({ clock }).run(work);
 * await clock.advance(250); // fires due timers in order, letting promises settle between them
 * ```
 */
export class FakeClock extends ManualClock {
  /**
   * Moves time forward by `ms` milliseconds, firing every timer that falls due in order, each at its
   * own due time, and letting pending promise callbacks run after each one (so an awaited executor
   * step can set its next timer within the same advance).
   * @throws RangeError when `ms` is negative or not finite.
   */
  async advance(ms: number): Promise<void> {
    // A RangeError, not a PolicyConfigError: a test's mistake in driving the clock, not an option.
    if (!DELAY_RULE.accepts(ms))
      throw new RangeError(`FakeClock.advance: ms ${DELAY_RULE.rule}, got ${String(ms)}`);
    const target = this.current + ms;
    await settle();
    for (
      let next = this.heap.takeDue(target);
      next !== undefined;
      next = this.heap.takeDue(target)
    ) {
      this.current = Math.max(this.current, next.due);
      next.callback();
      await settle();
    }
    this.current = target;
    await settle();
  }

  /** Fires timers until none is pending (at most `limit` of them), jumping time to each one. */
  async runAll(limit = 10_000): Promise<void> {
    await settle();
    for (let i = 0; i < limit; i++) {
      const next = this.heap.peek();
      if (next === undefined) return;
      await this.advance(Math.max(0, next.due - this.current));
    }
    throw new Error(
      `FakeClock.runAll: still ${this.pending} timers pending after ${limit} firings`,
    );
  }
}

/** Lets every queued promise callback run (a macrotask turn drains the microtask queue). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
