import {
  AttemptCeiling,
  Breaker,
  Classifier,
  type ClassifierRule,
  type Clock,
  type Drain,
  Hedge,
  Limit,
  MeasuredBackoff,
  type MeasuredLatency,
  type Policy,
  RetryBudget,
} from '../core/index.js';
import { classifierFromSpec } from './classifier-config.js';
import type { BudgetPlan, PolicyPlan } from './policy-config.js';

/** The state a built policy runs on; every field left out keeps what the plan alone gives. */
export interface PlanState {
  /** The budget to spend from; default {@link unpinnedBudget} of the plan. */
  readonly budget?: RetryBudget;
  /** The breaker to consult; default {@link unpinnedBreaker} of the plan. */
  readonly breaker?: Breaker | undefined;
  /** The concurrency limit; default {@link unpinnedLimit} of the plan. */
  readonly limit?: Limit | undefined;
  /** The hedge; default {@link unpinnedHedge} of the plan. */
  readonly hedge?: Hedge | undefined;
  /**
   * What the attempt ceiling and a measured backoff read and learn (pinned to the name); default
   * each policy instance its own.
   */
  readonly measurements?: MeasuredLatency;
  /** Time source; default the preset's (`SystemClock.instance`). */
  readonly clock?: Clock;
  /** Uniform [0, 1) source; default the preset's (`Math.random`). */
  readonly random?: () => number;
  /** The shutdown switch; default none. */
  readonly drain?: Drain;
  /** A classifier given in code for this name: it replaces the configured one. */
  readonly classifier?: Classifier;
  /**
   * Error rules the hosting framework adds under the default classifier (the Nest layer judges a
   * thrown `HttpException` by its status); used when the plan's classifier is `'default'`-based or
   * unset on a preset whose classifier is `Classifier.default`.
   */
  readonly defaultRules?: readonly ClassifierRule[];
}

/**
 * The one way a config entry becomes a policy: the plan's preset with its validated changes and its
 * name, on the state given. Without state, its budget and breaker belong to the policy instance (what
 * the CLI simulates and what each key of a scope gets); the registry passes the state pinned to names.
 * @param plan one entry of `parseResilienceConfig(config).policies`
 * @throws PolicyConfigError only if the plan was not produced by `parseResilienceConfig`
 */
export function policyFromPlan(plan: PolicyPlan, state: PlanState = {}): Policy {
  const budget = 'budget' in state ? state.budget : unpinnedBudget(plan.budget);
  const breaker = 'breaker' in state ? state.breaker : unpinnedBreaker(plan);
  const limit = 'limit' in state ? state.limit : unpinnedLimit(plan);
  const hedge = 'hedge' in state ? state.hedge : unpinnedHedge(plan);
  const measurements = state.measurements;
  const ceiling = plan.attemptCeiling;
  const backoff = plan.changes.backoff;
  return plan.preset.with({
    ...plan.changes,
    backoff:
      measurements !== undefined && backoff instanceof MeasuredBackoff
        ? backoff.using(measurements)
        : backoff,
    attemptCeiling:
      ceiling === undefined
        ? undefined
        : measurements === undefined
          ? AttemptCeiling.measured(ceiling)
          : AttemptCeiling.using(measurements, ceiling),
    name: plan.name,
    budget,
    breaker,
    limit,
    hedge,
    clock: state.clock,
    random: state.random,
    drain: state.drain,
    classifier: planClassifier(plan, state),
  });
}

/** The classifier of a built policy: the code one, else the configured one, else the preset's (with the framework's default rules under `Classifier.default`). */
function planClassifier(plan: PolicyPlan, state: PlanState): Classifier | undefined {
  if (state.classifier !== undefined) return state.classifier;
  const defaultRules = state.defaultRules ?? [];
  if (plan.classifier !== undefined) return classifierFromSpec(plan.classifier, defaultRules);
  return plan.preset.options.classifier === Classifier.default && defaultRules.length > 0
    ? classifierFromSpec(undefined, defaultRules)
    : undefined;
}

/**
 * A budget private to each policy instance: `none` → `RetryBudget.none`; `private` and `shared` alike
 * → an automatic budget with the plan's parameters (there is no registry to share a bucket through);
 * `window` → a sliding window per instance.
 */
export function unpinnedBudget(plan: BudgetPlan): RetryBudget {
  if (plan.kind === 'none') return RetryBudget.none;
  return plan.kind === 'window'
    ? RetryBudget.slidingWindow(plan.options)
    : RetryBudget.automaticWith(plan.options);
}

/** A breaker private to each policy instance with the plan's settings, or `undefined` when it has none. */
export function unpinnedBreaker(plan: PolicyPlan): Breaker | undefined {
  return plan.breaker === undefined ? undefined : Breaker.from(plan.breaker);
}

/** A hedge whose state is private to each policy instance (each key of a scope), or `undefined` when the plan has none. */
export function unpinnedHedge(plan: PolicyPlan): Hedge | undefined {
  return plan.hedge === undefined ? undefined : Hedge.of(plan.hedge);
}

/** A limiter private to each policy instance (each key of a scope) with the plan's settings, or `undefined` when it has none. */
export function unpinnedLimit(plan: PolicyPlan): Limit | undefined {
  return plan.limit === undefined ? undefined : Limit.of(plan.limit);
}
