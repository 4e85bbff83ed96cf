import type { PolicyConfigError } from '../core/index.js';

/**
 * A resilience config (module options or a `PolicyRegistry.reload`) is invalid. Validation does not
 * stop at the first problem: {@link ResilienceConfigError.problems} holds every one found, each a
 * `PolicyConfigError` whose `field` is the full dotted path (`policies.payments.budget.fraction`),
 * and the message lists them all, one per line, with the value and the rule:
 *
 * ```text
 * Invalid resilience config (1 problem):
 *   - policies.payments.budget.fraction: 1.5 is invalid: must be a number in [0, 1]
 * ```
 */
export class ResilienceConfigError extends Error {
  override readonly name = 'ResilienceConfigError';

  /** @param problems every problem found, in config order; at least one. */
  constructor(readonly problems: readonly PolicyConfigError[]) {
    super(
      `Invalid resilience config (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((problem) => `  - ${problem.message}`).join('\n'),
    );
  }
}
