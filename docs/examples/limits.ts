// docs/limits.md; test/docs-examples.e2e-spec.ts runs it.
// #region bulkhead
import { FakeClock, Limit, Resilience } from '../../lib/core/index.js';

const clock = new FakeClock();
// At most 2 attempts in flight; a third caller waits (FIFO) for a slot, a fourth is refused.
const prices = Resilience.default.with({
  name: 'prices',
  limit: Limit.concurrency(2, { queue: 1 }),
  fallback: (stop) => (stop.reason === 'limited' ? 'cached price' : Promise.reject(stop.error)),
  clock,
});
// #endregion bulkhead

/** Four concurrent calls against a limit of 2 with a queue of 1: two run, one waits, one is answered by the fallback. */
export async function bulkhead() {
  // #region bulkhead
  const slow = () =>
    new Promise<string>((resolve) => clock.setTimer(50, () => resolve('fresh price')));
  const calls = [prices.run(slow), prices.run(slow), prices.run(slow), prices.run(slow)];
  await clock.advance(100); // the refusal comes after the 100 ms guarded pause
  const answers = await Promise.all(calls);
  // answers: 'fresh price' × 3 (the third after waiting 50 ms for a slot), then 'cached price'
  // #endregion bulkhead
  return { answers, limiter: prices.limiter()!.snapshot() };
}
