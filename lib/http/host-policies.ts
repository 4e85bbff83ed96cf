import {
  Classifier,
  type ClassifierRule,
  type KeyedPolicySource,
  Policy,
  PolicyConfigError,
  PolicyScope,
  type PolicyScopeEntry,
  Verdict,
  httpRule,
  httpRuleAt,
  isKeyedPolicySource,
  isRetryable,
} from '../core/index.js';
import { checkValue, keyBoundRule } from '../core/internal.js';
import { CallFacts } from '../outbound/call-facts.js';
import { BodyNotReplayableError } from './request-body.js';

/** Default of `maximumHosts`: origins holding their own breaker, budget and estimators at once. */
export const DEFAULT_MAXIMUM_HOSTS = 64;

/** `maximumHosts`: it becomes the `maximumKeys` of the hosts' scope. */
const MAXIMUM_HOSTS_RULE = keyBoundRule('hosts with their own state');

/**
 * Where the per-host policies take their settings from: a policy value; a Nest `PolicyHandle`
 * (`registry.handle(name)`, a {@link KeyedPolicySource}: the name's settings with a breaker and
 * budget per host, following reloads, its hosts reported by health under the name); or any object
 * whose `current` returns the policy to follow (its budget and breaker values are used as they are).
 */
export type PolicySourceLike = Policy | KeyedPolicySource | { readonly current: Policy };

// Socket errors raised before the request left this process: the server cannot have acted on it.
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * True when `subject` (a response, an error) is a definitive refusal: 429 or 503 (the server says it
 * did not act), or a connection that never opened. Only these let a non-repeatable request go again.
 */
function isDefinitiveRefusal(subject: unknown): boolean {
  if (typeof subject !== 'object' || subject === null) return false;
  const status =
    subject instanceof Response
      ? subject.status
      : (subject as { response?: { status?: unknown } }).response?.status;
  if (status === 429 || status === 503) return true;
  if (typeof status === 'number') return false;
  const code = ((subject as { cause?: { code?: unknown } }).cause?.code ??
    (subject as { code?: unknown }).code) as unknown;
  return typeof code === 'string' && NOT_SENT_CODES.has(code);
}

/** A host's telemetry label: the origin's `host[:port]` (`https://pay.example.com` → `pay.example.com`). */
function hostLabel(origin: string): { host: string } {
  try {
    return { host: new URL(origin).host };
  } catch {
    return { host: origin };
  }
}

/**
 * Breaker, retry budget and estimators per origin (DESIGN §5): a `PolicyScope` keyed by origin,
 * bounded at `maximumHosts` (least recently used evicted, approximately), so two hosts never share a
 * breaker. Each host's policy classifies with `Classifier.http` (or the template's own classifier when
 * it is not the default) plus the idempotency rule: an ambiguous failure of a non-repeatable request
 * (a reset, a timeout, a 5xx other than 503) stays evidence for the host's breaker but is final.
 * When the source's settings change (a config reload), every host keeps its state (breaker, budget,
 * estimators) and adopts the new settings (see `PolicyScope.adopt`); an unchanged config keeps every
 * host's instance as it is. Readable for health (`size`, `entries(limit)`); built from a
 * `PolicyHandle`, its hosts are reported under the name by `ResilienceHealthIndicator`.
 * Each host's events carry `dependency.host` (telemetry's `nresilience.host`), bounded by `maximumHosts`.
 */
export class HostPolicies {
  // The source's policy the scope's template was made from, to notice a reload.
  private template: Policy | undefined;
  private scope: PolicyScope<string> | undefined;

  /**
   * @param source the policy (or a handle following reloads) every host starts from
   * @param maximumHosts most hosts held, an integer >= 1 (kept as {@link HostPolicies.maximumHosts})
   * @param wallClock ms since the epoch, for `Retry-After` dates; default the system's
   * @throws PolicyConfigError (field `maximumHosts`) for a bad bound
   */
  constructor(
    private readonly source: PolicySourceLike,
    readonly maximumHosts: number = DEFAULT_MAXIMUM_HOSTS,
    private readonly wallClock?: () => number,
  ) {
    checkValue(MAXIMUM_HOSTS_RULE, 'maximumHosts', maximumHosts);
    // A handle is not read here: a Nest registry loads its policies only when the app initializes.
    if (
      !(source instanceof Policy) &&
      !isKeyedPolicySource(source) &&
      !(typeof source === 'object' && source !== null && 'current' in source)
    ) {
      throw new PolicyConfigError(
        'policy',
        source,
        'must be a Policy or a handle with a current Policy (e.g. registry.handle(name))',
      );
    }
    if (isKeyedPolicySource(source)) source.trackKeys?.(this);
  }

  /**
   * The policy of `origin`. When the source's settings changed (a reload), every host held keeps its
   * state and takes the new settings.
   */
  for(origin: string): Policy {
    const source = this.source;
    const current =
      source instanceof Policy
        ? source
        : isKeyedPolicySource(source)
          ? source.keyedTemplate
          : source.current;
    if (current !== this.template || this.scope === undefined) {
      const hostTemplate = current.with({
        classifier: this.classifierFor(current.options.classifier),
      });
      if (this.scope === undefined)
        this.scope = new PolicyScope<string>(hostTemplate, {
          maximumKeys: this.maximumHosts,
          label: hostLabel,
        });
      else this.scope.adopt(hostTemplate);
      this.template = current;
    }
    return this.scope.for(origin);
  }

  /** Hosts held now. */
  get size(): number {
    return this.scope?.size ?? 0;
  }

  /** Readings of up to `limit` hosts (breaker snapshot, budget utilization), oldest first. */
  entries(limit = 100): PolicyScopeEntry<string>[] {
    return this.scope?.entries(limit) ?? [];
  }

  /** The hosts whose breaker is not closed now (open, isolated, half-open, recovering). */
  unhealthy(): string[] {
    return this.entries(Infinity)
      .filter((entry) => entry.breaker !== undefined && entry.breaker.state !== 'closed')
      .map((entry) => entry.key);
  }

  private classifierFor(own: Classifier): Classifier {
    // A classifier that leaves returned values Ok (the default, Classifier.http, or the error-only
    // classifier a Nest registry gives its policies) gets the HTTP rule first; one that judges values
    // itself is the user's and is used as it is.
    const http =
      own === Classifier.http || own.valuesAreOk
        ? this.wallClock === undefined
          ? httpRule
          : httpRuleAt(this.wallClock)
        : undefined;
    const rule: ClassifierRule = (outcome, context) => {
      if (!outcome.ok && outcome.error instanceof BodyNotReplayableError) return Verdict.permanent;
      const verdict =
        (context.callerAborted ? undefined : http?.(outcome, context)) ??
        own.classify(outcome, context);
      if (!isRetryable(verdict)) return verdict;
      // The call's facts (`RunOptions.facts`, given by the resilient fetch and axios adapter): a
      // request not safe to repeat ends here, and the call learns why for its final error.
      const facts = context.facts;
      if (!(facts instanceof CallFacts) || facts.repeatable) return verdict;
      const subject = outcome.ok ? outcome.value : outcome.error;
      if (isDefinitiveRefusal(subject)) return verdict;
      facts.stopAsNotRepeatable(subject);
      return Verdict.final(verdict);
    };
    return Classifier.of(rule);
  }
}
