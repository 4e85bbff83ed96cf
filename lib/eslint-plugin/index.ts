/**
 * `@nresilience/nestjs/eslint-plugin`: lint rules for resilience mistakes that type checks cannot see
 * (a policy rebuilt per call, a deadline too short for its attempts, an unused attempt signal, …).
 * ESLint (>= 9, flat config) and the typescript-eslint parser are needed; both are the application's
 * own dev dependencies (ESLint is an optional peer of this package).
 *
 * ```js
 * // eslint.config.js
 * import tseslint from 'typescript-eslint';
 * import nresilience from '@nresilience/nestjs/eslint-plugin';
 *
 * export default [...tseslint.configs.recommended, nresilience.configs.recommended];
 * ```
 * @packageDocumentation
 *
 * @module @nresilience/nestjs/eslint-plugin
 */
import { createRequire } from 'node:module';
import type { ESLint, Linter, Rule } from 'eslint';
import { attemptSignalPassed } from './rules/attempt-signal-passed.js';
import { deadlineFitsAttempts } from './rules/deadline-fits-attempts.js';
import { noPerCallPolicy } from './rules/no-per-call-policy.js';
import { noRejectedCallRetry } from './rules/no-rejected-call-retry.js';
import { noReplacedListeners } from './rules/no-replaced-listeners.js';
import { resilientMethod } from './rules/resilient-method.js';

/** The names of the plugin's rules (used as `nresilience/<name>` in a config). */
export type RuleName =
  | 'no-per-call-policy'
  | 'deadline-fits-attempts'
  | 'resilient-method'
  | 'attempt-signal-passed'
  | 'no-replaced-listeners'
  | 'no-rejected-call-retry';

/** The plugin object: its rules and its `recommended` flat config. */
export interface NResiliencePlugin extends ESLint.Plugin {
  readonly meta: { readonly name: string; readonly version: string };
  readonly rules: Readonly<Record<RuleName, Rule.RuleModule>>;
  readonly configs: {
    /**
     * Every rule: `no-per-call-policy` (heuristic: which functions run per call is a guess) as a
     * warning, the others as errors. Registers the plugin under the prefix `nresilience`. Sets no
     * parser and no `files`: combine it with typescript-eslint's config for your TypeScript sources.
     */
    readonly recommended: Linter.Config;
  };
}

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

// typescript-eslint's rule type and ESLint's describe the same objects; ESLint's is the public one.
const rules = {
  [noPerCallPolicy.name]: noPerCallPolicy,
  [deadlineFitsAttempts.name]: deadlineFitsAttempts,
  [resilientMethod.name]: resilientMethod,
  [attemptSignalPassed.name]: attemptSignalPassed,
  [noReplacedListeners.name]: noReplacedListeners,
  [noRejectedCallRetry.name]: noRejectedCallRetry,
} as unknown as Record<RuleName, Rule.RuleModule>;

const recommendedRules: Record<`nresilience/${RuleName}`, Linter.RuleSeverity> = {
  'nresilience/no-per-call-policy': 'warn',
  'nresilience/deadline-fits-attempts': 'error',
  'nresilience/resilient-method': 'error',
  'nresilience/attempt-signal-passed': 'error',
  'nresilience/no-replaced-listeners': 'error',
  'nresilience/no-rejected-call-retry': 'error',
};

const configs = {} as { recommended: Linter.Config };

/** The plugin (also the default export). */
export const plugin: NResiliencePlugin = {
  meta: { name: '@nresilience/nestjs/eslint-plugin', version },
  rules,
  configs,
};
configs.recommended = {
  name: 'nresilience/recommended',
  plugins: { nresilience: plugin },
  rules: recommendedRules,
};

export default plugin;
