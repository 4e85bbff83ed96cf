/**
 * Success-path cost of a hedged policy whose threshold is armed but never reached (DESIGN §3.8,
 * §10): every call arms the hedge timer once, at the live p95, and clears it when the work answers
 * first. Rows: the raw awaited call, `Resilience.default`, and the same with `Hedge.at(0.95)` and
 * `repeatable: true`, in the same run (no peer hedges in JavaScript; Polly is .NET). Then the timer
 * arms per call, counted on a clock that wraps the system clock. Run on demand: `npm run bench`
 * (all) or, after `npm run build`, `node dist-sample/bench/hedging.js`. Not part of `npm test`.
 */
import { type Clock, Resilience, SystemClock, type TimerHandle } from '@nresilience/nestjs/core';
import { armedHedge, work } from './allocation-tasks.js';
import { compileLoop, measure, smoke } from './harness.js';

/** The system clock, counting the timers set and cleared through it. */
class CountingClock implements Clock {
  arms = 0;
  clears = 0;
  private readonly system = SystemClock.instance;

  now(): number {
    return this.system.now();
  }

  setTimer(delay: number, callback: () => void, keepAlive?: boolean, now?: number): TimerHandle {
    this.arms++;
    return this.system.setTimer(delay, callback, keepAlive, now);
  }

  clearTimer(handle: TimerHandle): void {
    this.clears++;
    this.system.clearTimer(handle);
  }
}

const defaults = Resilience.default;
const hedged = armedHedge();

const rows = await measure('Hedged success path (threshold armed, never reached)', [
  ['raw await', () => work()],
  ['nresilience: Resilience.default', () => defaults.run(work)],
  ['nresilience: Resilience.default + Hedge.at(0.95), threshold armed', () => hedged.run(work)],
]);
console.log(
  `hedge armed, not reached: +${(rows[2]!.ns - rows[1]!.ns).toFixed(0)} ns/call over Resilience.default`,
);

const clock = new CountingClock();
const counted = armedHedge(clock);
const calls = smoke ? 200 : 100_000;
await compileLoop(() => counted.run(work))(calls);
// A hedge timer that fired was not cleared: arms − clears is the hedges started.
console.log(
  `timers per call: ${(clock.arms / calls).toFixed(3)} armed, ${(clock.clears / calls).toFixed(3)} cleared, ` +
    `${clock.arms - clock.clears} fired (${calls} calls; threshold then ${counted.hedger()!.threshold(clock.now())!.toFixed(4)} ms)`,
);
