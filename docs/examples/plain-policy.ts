// The README's "outside Nest" example; test/docs-examples.e2e-spec.ts runs it against a loopback server.
// #region plain-policy
import { Resilience } from '../../lib/core/index.js';

const payments = Resilience.http.with({ name: 'payments', attempts: 2 });
// #endregion plain-policy

/** Charges through `payments` at `url`, then runs `work` with `tryRun`. */
export async function plainPolicy(url: string, work: () => Promise<string>) {
  // #region plain-policy
  const receipt = await payments.run(({ signal }) => fetch(url, { signal }).then((r) => r.json()));
  const result = await payments.tryRun(work); // never rejects: { ok, value, error, reason, attempts: AttemptRecord[], duration }
  // #endregion plain-policy
  return { receipt: receipt as unknown, result };
}
