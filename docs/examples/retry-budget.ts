// docs/retry-budget.md; test/docs-examples.e2e-spec.ts runs it.
// #region retry-budget
import {
  Backoff,
  CallRejectedError,
  FakeClock,
  Resilience,
  RetryBudget,
} from '../../lib/core/index.js';

const clock = new FakeClock();
// A bucket of its own with no floor: it starts with 10 tokens and only successes (0.1 each) refill it.
const inventory = Resilience.default.with({
  name: 'inventory',
  attempts: 2,
  backoff: Backoff.none,
  budget: RetryBudget.of({ fraction: 0.1, minimumPerSecond: 0 }),
  clock,
});
// #endregion retry-budget

/** Eleven calls against a dependency that is down: ten are retried once, the eleventh is refused. */
export async function drainBudget() {
  // #region retry-budget
  const down = async (): Promise<string> => {
    throw new Error('inventory down');
  };
  const outcomes: string[] = [];
  for (let i = 0; i < 11; i++) {
    const call = inventory
      .run(down)
      .catch((error: Error) =>
        error instanceof CallRejectedError ? `refused: ${error.reason}` : error.message,
      );
    await clock.advance(100); // a refusal is reported after the 100 ms guarded pause
    outcomes.push(await call);
  }
  // outcomes: 'inventory down' × 10 (each after its one retry), then 'refused: BudgetExhausted'
  // #endregion retry-budget
  return { outcomes, utilization: inventory.bucket()?.utilization };
}
