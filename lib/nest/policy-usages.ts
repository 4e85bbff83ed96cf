import type { ParsedResilienceConfig } from '../config/policy-config.js';
import { PolicyConfigError } from '../core/index.js';
import { UnknownPolicyError } from './unknown-policy.error.js';

/**
 * The policy names the running application uses (`@Resilient`, `@InjectPolicy`) and where: they must
 * stay registered, so a reload that removes one is refused. @internal
 */
export class PolicyUsages {
  private readonly inUse = new Map<string, string[]>();

  /**
   * Records `usages` (name → where it is used), after checking them against `registered`.
   * @throws UnknownPolicyError naming every unregistered name and where it is used
   */
  require(
    usages: ReadonlyMap<string, readonly string[]>,
    registered: (name: string) => boolean,
    names: () => string[],
  ): void {
    const missing = [...usages.keys()].filter((name) => !registered(name));
    if (missing.length > 0) throw new UnknownPolicyError(missing, names(), usages);
    for (const [name, where] of usages)
      this.inUse.set(name, [...(this.inUse.get(name) ?? []), ...where]);
  }

  /** One problem per used name that `config` leaves out (path `policies.<name>`). */
  problems(config: ParsedResilienceConfig): PolicyConfigError[] {
    const problems: PolicyConfigError[] = [];
    for (const [name, where] of this.inUse) {
      if (!config.policies.has(name)) {
        problems.push(
          new PolicyConfigError(
            `policies.${name}`,
            undefined,
            `is required: it is used by ${where.join(', ')} in the running application`,
          ),
        );
      }
    }
    return problems;
  }
}
