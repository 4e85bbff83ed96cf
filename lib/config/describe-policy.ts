import { Backoff, Jitter, type Policy, type ResolvedBreakerSettings } from '../core/index.js';
import type { PolicyPlan, PresetName } from './policy-config.js';

/** A backoff as resolved (ms). `custom` curves are code: only their cap is known. */
export type ResolvedBackoffConfig =
  | { type: 'exponential'; transientBase: number; throttledBase: number; factor: number; maximumDelay: number; jitter: 'full' | 'equal' | 'none' | 'custom' }
  | { type: 'constant'; delay: number }
  | { type: 'none' }
  | { type: 'custom'; maximumDelay: number };

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
  /** `false` for no budget; a token bucket `{ fraction, minimumPerSecond, shared? }`; or a window. */
  readonly budget: false | { fraction: number; minimumPerSecond: number; shared?: string } | { retryRatio: number; samplingDuration: number; minimumThroughput: number };
  /** Every breaker setting, or `false` for none (`recovery` is `false` when off). */
  readonly breaker: false | (Omit<ResolvedBreakerSettings, 'recovery'> & { recovery: false | NonNullable<ResolvedBreakerSettings['recovery']> });
  readonly scope: false | { maximumKeys: number };
}

/** The resolved config of a policy built from `plan` (see {@link ResolvedPolicyConfig}). */
export function describePolicy(plan: PolicyPlan, policy: Policy): ResolvedPolicyConfig {
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
    budget: budget.kind === 'none' ? false : budget.kind === 'shared' ? { ...budget.options, shared: budget.sharedName } : { ...budget.options },
    breaker: plan.breaker === undefined ? false : { ...plan.breaker, recovery: plan.breaker.recovery ?? false },
    scope: plan.scope === undefined ? false : { maximumKeys: plan.scope.maximumKeys },
  };
}

function describeBackoff(backoff: Backoff): ResolvedBackoffConfig {
  if (backoff === Backoff.none) return { type: 'none' };
  const fields = backoff as Partial<{ delay: number; transientBase: number; throttledBase: number; factor: number; jitter: Jitter }>;
  if (typeof fields.delay === 'number') return { type: 'constant', delay: fields.delay };
  if (typeof fields.transientBase === 'number') {
    const jitter = fields.jitter === Jitter.full ? 'full' : fields.jitter === Jitter.equal ? 'equal' : fields.jitter === Jitter.none ? 'none' : 'custom';
    return { type: 'exponential', transientBase: fields.transientBase, throttledBase: fields.throttledBase!, factor: fields.factor!, maximumDelay: backoff.maximumDelay, jitter };
  }
  return { type: 'custom', maximumDelay: backoff.maximumDelay };
}
