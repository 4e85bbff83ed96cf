/**
 * The framework-free config layer: parse and validate the JSON/YAML-shaped config, build policies
 * from it, and keep the state pinned to policy names across reloads (DESIGN §2, §4). The Nest
 * registry, the CLI and file reloads all go through it.
 */
export * from './policy-config.js';
export { ResilienceConfigError } from './resilience-config.error.js';
export {
  type PlanState,
  policyFromPlan,
  unpinnedBreaker,
  unpinnedBudget,
} from './policy-from-plan.js';
export { PinnedPolicies, type PinnedPoliciesOptions } from './pinned-policies.js';
export {
  ConfigFileError,
  type ConfigFileProblem,
  configFileFormat,
  parseConfigText,
  readConfigFile,
} from './config-file.js';
export {
  ConfigFileSource,
  type ConfigFileSourceOptions,
  DEFAULT_CONFIG_DEBOUNCE_MS,
} from './config-file-source.js';
export {
  type ResolvedBackoffConfig,
  type ResolvedClassifierConfig,
  type ResolvedPolicyConfig,
  describePolicy,
} from './describe-policy.js';
