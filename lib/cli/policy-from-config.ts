import { Breaker } from '../core/breaker-value.js';
import { Policy } from '../core/policy.js';
import { RetryBudget } from '../core/retry-budget.js';
import type { BudgetPlan, PolicyPlan } from '../nest/policy-config.js';

/**
 * The policy a config entry describes, built the way the Nest registry would — minus the process
 * wiring: the plan's preset with its validated changes and name; its budget as a bucket private to
 * the policy instance (`private` and `shared` budgets alike: a simulation runs one policy, so there
 * is nothing to share, and every run must start from a fresh bucket); its breaker, if any, per instance too.
 * @param plan one entry of `parseResilienceConfig(config).policies`
 * @returns a policy on the system clock; the simulator re-creates it on its own clock
 */
export function policyFromPlan(plan: PolicyPlan): Policy {
  const breaker = plan.breaker === undefined ? undefined : Breaker.with(plan.breaker);
  return plan.preset.with({ ...plan.changes, name: plan.name, budget: budgetFromPlan(plan.budget), breaker });
}

/** `none` → `RetryBudget.none`; otherwise an automatic (per-instance) budget with the plan's parameters. */
function budgetFromPlan(plan: BudgetPlan): RetryBudget {
  return plan.kind === 'none' ? RetryBudget.none : RetryBudget.automaticWith(plan.options);
}
