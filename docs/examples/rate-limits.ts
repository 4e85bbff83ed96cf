// docs/rate-limits.md; test/docs-examples.e2e-spec.ts runs it.
// #region local
import { FakeClock, Limit, Resilience } from '../../lib/core/index.js';

const clock = new FakeClock();
// At most 5 calls a second, 2 at once after a quiet spell (the provider's quota for this process).
const geocoder = Resilience.default.with({
  name: 'geocoder',
  limit: Limit.rate({ limit: 5, per: 1000, burst: 2 }),
  clock,
});
// #endregion local

/** Three calls at once against 5/s with a burst of 2: two run, the third is refused (Limited) with the ms to the next token. */
export async function localLimit() {
  // #region local
  const calls = [1, 2, 3].map((i) => geocoder.tryRun(() => Promise.resolve(`place ${i}`)));
  await clock.advance(100); // a refusal is reported after the 100 ms guarded pause
  const results = await Promise.all(calls);
  // 'place 1', 'place 2', then reason 'limited' with retryAfter 100: a token every 200 ms, the
  // next due 200 ms after the burst, so 100 ms after the pause
  // #endregion local
  return results.map((r) =>
    r.ok ? r.value : `${r.reason} ${(r.error as { retryAfter?: number }).retryAfter} ms`,
  );
}
