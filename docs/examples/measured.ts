// docs/measured.md; test/docs-measured.e2e-spec.ts runs it and checks the explain output the guide shows.
// #region ceiling
import { Backoff, FakeClock, Resilience } from '../../lib/core/index.js';

const clock = new FakeClock();
// Resilience.http has the attempt ceiling (AttemptCeiling.default): 3 × the p95 of successful
// attempts over 5 minutes, once 100 were seen. The backoff's base is measured too here.
const prices = Resilience.http.with({
  name: 'prices',
  backoff: Backoff.measured({ jitter: 'none' }),
  clock,
});
// #endregion ceiling

/** 100 calls of 20 ms warm the ceiling; then a call whose first attempt hangs is cut and retried. */
export async function cutHungAttempt() {
  // #region ceiling
  const quick = () => new Promise<string>((resolve) => clock.setTimer(20, () => resolve('price')));
  for (let i = 0; i < 100; i++) {
    const call = prices.run(quick);
    await clock.advance(20);
    await call;
  }
  // prices.measured: { attemptCeiling: ~61.7, backoffBase: ~20.2, hedgeThreshold: undefined, ... }
  const started = clock.now();
  // The first attempt hangs: cut at the ceiling (not at the 30 s deadline), retried after the
  // measured base (the p50, ~20 ms), answered in 20 ms.
  const answer = prices.run(({ signal, attempt }) =>
    attempt === 1
      ? new Promise<string>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        )
      : quick(),
  );
  await clock.runAll();
  console.log(prices.explain().toString());
  // #endregion ceiling
  return {
    answer: await answer,
    tookMs: clock.now() - started,
    measured: prices.measured,
    explained: prices.explain().toString(),
  };
}
