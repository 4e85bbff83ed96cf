import {
  Classifier,
  type KeyedPolicySource,
  grpcStatusRule,
  isKeyedPolicySource,
  type Policy,
  PolicyScope,
  type PolicyScopeEntry,
} from '../core/index.js';

/**
 * Where the interceptor reads its policy: a policy value; a Nest `PolicyHandle`
 * (`registry.handle(name)`, a {@link KeyedPolicySource}: the name's settings with state per service,
 * following reloads, its services reported by health under the name); or a function returning the
 * current policy (the same object until its settings change).
 */
export type PolicySourceOption = Policy | KeyedPolicySource | (() => Policy);

/** A key's telemetry label: its service (`package.Service`, the method dropped when keyed per method). */
function serviceLabel(key: string): { service: string } {
  const slash = key.indexOf('/');
  return { service: slash === -1 ? key : key.slice(0, slash) };
}

/**
 * The policy of each gRPC service (or method): one {@link PolicyScope} per template, so each key has
 * its own breaker, retry budget and estimators, bounded like the HTTP hosts. When the source returns
 * a different policy (a registry reload that changed the name's config), every key held keeps its
 * state and adopts the new settings (see `PolicyScope.adopt`); the same policy keeps every key's
 * instance as it is. Each key's events carry `dependency.service` (telemetry's
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
  ) {
    if (isKeyedPolicySource(source)) source.trackKeys?.(this);
  }

  /** The policy of `key` (`package.Service` or `package.Service/Method`). */
  for(key: string): Policy {
    const source = this.source;
    const template =
      typeof source === 'function'
        ? source()
        : isKeyedPolicySource(source)
          ? source.keyedTemplate
          : source;
    if (template !== this.template || this.scope === undefined) {
      const own = template.options.classifier;
      const classifier =
        this.classifier ??
        (own === Classifier.default || own === Classifier.http
          ? Classifier.grpc
          : own === Classifier.grpc
            ? undefined
            : own.with(grpcStatusRule));
      const keyTemplate = classifier === undefined ? template : template.with({ classifier });
      if (this.scope === undefined)
        this.scope = new PolicyScope<string>(keyTemplate, {
          maximumKeys: this.maximumKeys,
          label: serviceLabel,
        });
      else this.scope.adopt(keyTemplate);
      this.template = template;
    }
    return this.scope.for(key);
  }

  /** The services' scope (for health and tests), `undefined` before the first call. */
  get current(): PolicyScope<string> | undefined {
    return this.scope;
  }

  /** Services held now. */
  get size(): number {
    return this.scope?.size ?? 0;
  }

  /** Readings of up to `limit` services (breaker snapshot, budget utilization), oldest first. */
  entries(limit = 100): PolicyScopeEntry<string>[] {
    return this.scope?.entries(limit) ?? [];
  }
}
