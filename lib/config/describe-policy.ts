import {
  Classifier,
  type Policy,
  type ResolvedBackoffConfig,
  describeBackoff,
  type ResolvedBreakerSettings,
  type ResolvedCeilingSettings,
  type ResolvedHedgeSettings,
  type ResolvedLimitSettings,
} from '../core/index.js';
import type { ClassifierBase, ClassifierSpec } from './classifier-config.js';

export type { ResolvedBackoffConfig } from '../core/index.js';
import type { PolicyPlan, PresetName } from './policy-config.js';

/**
 * A policy's classifier as described: the built-in one it is (`'default'`, `'http'`, `'grpc'`),
 * `'custom'` for one given in code (`forRoot({ classifiers })`, a preset's own), or the config's
 * simple rules with their base, every list filled in (`[]` when empty).
 */
export type ResolvedClassifierConfig = ClassifierBase | 'custom' | ClassifierSpec;

/**
 * What a named policy resolved to after its preset, `extends`, `defaults` and its own settings (every
 * value filled in; durations in ms; `null`/`false` for what is off), as `PolicyRegistry.describe(name)`
 * returns it: plain JSON, so it can be logged or served as it is.
 */
export interface ResolvedPolicyConfig {
  readonly name: string;
  /** The preset at the root of the chain. */
  readonly preset: PresetName;
  /** The policies it extends, nearest first. */
  readonly extends: readonly string[];
  readonly attempts: number;
  readonly deadline: number | null;
  readonly attemptTimeout: number | null;
  readonly useAmbientDeadline: boolean;
  readonly useAmbientCriticality: boolean;
  readonly backoff: ResolvedBackoffConfig;
  /**
   * `false` for no budget; a token bucket `{ fraction, minimumPerSecond, adaptive, shared? }` (a
   * policy's own bucket is adaptive — credit while retries work, DESIGN §3.5 — a shared one static);
   * or a window.
   */
  readonly budget:
    | false
    | { fraction: number; minimumPerSecond: number; adaptive: boolean; shared?: string }
    | { retryRatio: number; samplingDuration: number; minimumThroughput: number };
  /** Every breaker setting, or `false` for none (`recovery` is `false` when off). */
  readonly breaker:
    | false
    | (Omit<ResolvedBreakerSettings, 'recovery'> & {
        recovery: false | NonNullable<ResolvedBreakerSettings['recovery']>;
      });
  readonly scope: false | { maximumKeys: number };
  /** The limit's settings, or `false` for none. */
  readonly limit: false | ResolvedLimitSettings;
  /** The saturation multiple, or `false` when off. */
  readonly saturation: false | number;
  /** The hedge's settings, or `false` for none. */
  readonly hedge: false | ResolvedHedgeSettings;
  /** The attempt ceiling's settings (`multiple` × the `quantile`), or `false` for none. */
  readonly attemptCeiling: false | ResolvedCeilingSettings;
  /** Whether the measured terms are in force (`adaptive: false` turns them off). */
  readonly adaptive: boolean;
  /** The classifier (see {@link ResolvedClassifierConfig}). In Nest, `'default'` and `'grpc'` also judge a thrown `HttpException` by its status. */
  readonly classifier: ResolvedClassifierConfig;
}

/**
 * The resolved config of a policy built from `plan` (see {@link ResolvedPolicyConfig}).
 * @param codeClassifier true when a classifier given in code replaced the plan's (described `'custom'`)
 */
export function describePolicy(
  plan: PolicyPlan,
  policy: Policy,
  codeClassifier = false,
): ResolvedPolicyConfig {
  const o = policy.options;
  const budget = plan.budget;
  return {
    name: plan.name,
    preset: plan.presetName,
    extends: [...plan.extends],
    attempts: o.attempts,
    deadline: o.deadline ?? null,
    attemptTimeout: o.attemptTimeout ?? null,
    useAmbientDeadline: o.useAmbientDeadline,
    useAmbientCriticality: o.useAmbientCriticality,
    backoff: describeBackoff(o.backoff),
    budget:
      budget.kind === 'none'
        ? false
        : budget.kind === 'shared'
          ? { ...budget.options, adaptive: false, shared: budget.sharedName }
          : budget.kind === 'private'
            ? { ...budget.options, adaptive: true }
            : { ...budget.options },
    breaker:
      plan.breaker === undefined
        ? false
        : { ...plan.breaker, recovery: plan.breaker.recovery ?? false },
    scope: plan.scope === undefined ? false : { maximumKeys: plan.scope.maximumKeys },
    limit: plan.limit === undefined ? false : { ...plan.limit },
    saturation: o.saturation?.multiple ?? false,
    hedge: plan.hedge === undefined ? false : { ...plan.hedge },
    attemptCeiling: plan.attemptCeiling === undefined ? false : { ...plan.attemptCeiling },
    adaptive: o.adaptive,
    classifier: codeClassifier ? 'custom' : describeClassifier(plan),
  };
}

function describeClassifier(plan: PolicyPlan): ResolvedClassifierConfig {
  const spec = plan.classifier;
  if (spec !== undefined) {
    const bare =
      spec.permanent.length === 0 && spec.transient.length === 0 && spec.throttled.length === 0;
    return bare
      ? spec.base
      : {
          base: spec.base,
          permanent: [...spec.permanent],
          transient: [...spec.transient],
          throttled: [...spec.throttled],
        };
  }
  const own = plan.preset.options.classifier;
  return own === Classifier.default
    ? 'default'
    : own === Classifier.http
      ? 'http'
      : own === Classifier.grpc
        ? 'grpc'
        : 'custom';
}
