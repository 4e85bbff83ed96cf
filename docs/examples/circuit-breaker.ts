// docs/circuit-breaker.md; test/docs-examples.e2e-spec.ts runs it.
// #region circuit-breaker
import {
  Breaker,
  CallRejectedError,
  FakeClock,
  Resilience,
  RetryBudget,
} from '../../lib/core/index.js';

const clock = new FakeClock();
const ledger = Resilience.default.with({
  name: 'ledger',
  attempts: 1,
  budget: RetryBudget.none,
  // Trips on the 5th Transient failure in a row; the first break is 10 s, served whole (no jitter).
  breaker: Breaker.with({ consecutiveFailures: 5, breakDuration: 10_000, jitter: 'none' }),
  clock,
});
// #endregion circuit-breaker

/** Five failures open the breaker, a refusal follows, and after the break two good probes close it. */
export async function tripAndRecover() {
  // #region circuit-breaker
  const states: string[] = [];
  const fail = async (): Promise<string> => {
    throw new Error('ledger down');
  };
  for (let i = 0; i < 5; i++) await ledger.run(fail).catch(() => undefined);
  states.push(ledger.breaker()!.state); // 'open'

  const refused = ledger
    .run(async () => 'not called')
    .catch((error: CallRejectedError) => `${error.reason}, retry after ${error.retryAfter} ms`);
  await clock.advance(100); // the guarded pause
  // await refused → 'DependencyUnavailable, retry after 9900 ms'

  await clock.advance(10_000); // the break is over: half-open, one probe at a time
  await ledger.run(async () => 'probe 1');
  await ledger.run(async () => 'probe 2');
  states.push(ledger.breaker()!.state); // 'closed'
  // #endregion circuit-breaker
  return { states, refused: await refused };
}
