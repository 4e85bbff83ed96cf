// docs/hedging.md; test/docs-examples.e2e-spec.ts runs it.
// #region hedged
import { FakeClock, Hedge, Resilience } from '../../lib/core/index.js';

const clock = new FakeClock();
// A read: safe to send twice at once. A second attempt starts past the live p95 of recent latency.
const prices = Resilience.http.with({
  name: 'prices',
  hedge: Hedge.at(0.95),
  repeatable: true,
  clock,
});
// #endregion hedged

/** 40 calls of 20 ms warm the window; then a call whose first attempt hangs is answered by its hedge. */
export async function hedgedRead() {
  // #region hedged
  const quick = () => new Promise<string>((resolve) => clock.setTimer(20, () => resolve('price')));
  for (let i = 0; i < 40; i++) {
    const call = prices.run(quick);
    await clock.advance(20);
    await call;
  }
  let attempts = 0;
  // The first attempt hangs until its signal aborts; the hedge (attempt 2) answers in 20 ms.
  const answer = prices.run(({ signal, attempt }) => {
    attempts++;
    if (attempt === 2) return quick();
    return new Promise<string>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason)),
    );
  });
  await clock.advance(50);
  // await answer: 'price', from attempt 2, started at the threshold (about 20 ms) after the first
  // #endregion hedged
  return { answer: await answer, attempts, threshold: prices.hedger()!.threshold(clock.now()) };
}
