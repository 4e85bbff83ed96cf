import { Classifier, grpcStatusRule, type Policy, PolicyScope } from '../core/index.js';

/** Where the interceptor reads its policy: a policy value, or a function returning the current one. */
export type PolicySourceOption = Policy | (() => Policy);

/** A key's telemetry label: its service (`package.Service`, the method dropped when keyed per method). */
function serviceLabel(key: string): { service: string } {
  const slash = key.indexOf('/');
  return { service: slash === -1 ? key : key.slice(0, slash) };
}

/**
 * The policy of each gRPC service (or method): one {@link PolicyScope} per template, so each key has
 * its own breaker, retry budget and estimators, bounded like the HTTP hosts. When the source returns
 * a different policy (a registry reload), the scope is rebuilt and every key starts fresh, as the
 * registry's own scopes do. Each key's events carry `dependency.service` (telemetry's
 * `nresilience.service`), bounded by `maximumKeys`.
 */
export class ServicePolicies {
  private template: Policy | undefined;
  private scope: PolicyScope<string> | undefined;

  /**
   * @param source the policy, or a function returning the current one
   * @param maximumKeys the most services (or methods) held at once
   * @param classifier the classifier keys run with, or `undefined` for the policy's own with the gRPC
   *   rule tried first: `Classifier.grpc` for the presets that know no gRPC status
   *   (`Classifier.default` would retry every status, `Classifier.http` is `Resilience.http`'s), and
   *   the policy's classifier under `grpcStatusRule` otherwise (a Nest registry policy's judges
   *   `HttpException`s, which a gRPC call never throws)
   */
  constructor(
    private readonly source: PolicySourceOption,
    private readonly maximumKeys: number,
    private readonly classifier: Classifier | undefined,
  ) {}

  /** The policy of `key` (`package.Service` or `package.Service/Method`). */
  for(key: string): Policy {
    const template = typeof this.source === 'function' ? this.source() : this.source;
    if (template !== this.template || this.scope === undefined) {
      // The services of the old settings run no more calls: let their observers drop them.
      this.scope?.clear();
      const own = template.options.classifier;
      const classifier = this.classifier ?? (own === Classifier.default || own === Classifier.http ? Classifier.grpc : own === Classifier.grpc ? undefined : own.with(grpcStatusRule));
      this.scope = new PolicyScope<string>(template, {
        maximumKeys: this.maximumKeys,
        shape: classifier === undefined ? undefined : (_key, policy) => policy.with({ classifier }),
        label: serviceLabel,
      });
      this.template = template;
    }
    return this.scope.for(key);
  }

  /** The scope of the current template (for health and tests), `undefined` before the first call. */
  get current(): PolicyScope<string> | undefined {
    return this.scope;
  }
}
