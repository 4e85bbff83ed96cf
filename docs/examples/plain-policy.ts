// docs/getting-started.md, "Without Nest"; test/docs-examples.e2e-spec.ts runs it against a loopback server.
// #region plain-policy
import { Resilience } from '../../lib/core/index.js';

// Derived once and kept: its retry budget and breaker see every call.
const payments = Resilience.http.with({ name: 'payments', attempts: 2 });

/** Charges through `payments` at `url`, then runs `work` with `tryRun`. */
export async function plainPolicy(url: string, work: () => Promise<string>) {
  const receipt = await payments.run(({ signal }) => fetch(url, { signal }).then((r) => r.json()));
  const result = await payments.tryRun(work); // never rejects: { ok, value, error, reason, attempts: AttemptRecord[], duration }
  return { receipt: receipt as unknown, result };
}
// #endregion plain-policy
