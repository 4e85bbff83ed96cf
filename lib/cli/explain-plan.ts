import type { Policy } from '../core/index.js';
import type { PolicyPlan } from '../config/policy-config.js';

/**
 * What `nresilience explain` prints for a policy of a config file: where its settings came from
 * (the preset, the policies it extends, `defaults` underneath), then each term as
 * `policy.explain()` gives it. A policy built from a file has run no call, so what is measured
 * reads cold.
 */
export function explainPlan(plan: PolicyPlan, policy: Policy): string {
  const chain = plan.extends.length === 0 ? '' : `, extends ${plan.extends.join(' → ')}`;
  return [
    `resolved from preset ${plan.presetName}${chain}, with the file's defaults underneath`,
    policy.explain().toString(),
  ].join('\n');
}
