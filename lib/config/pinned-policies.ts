import {
  Breaker,
  breakerTransitionReporter,
  CircuitBreaker,
  type Classifier,
  ConcurrencyLimiter,
  Limit,
  MAXIMUM_LIMIT,
  Hedge,
  HedgeState,
  AttemptCeiling,
  MeasuredBackoff,
  MeasuredLatency,
  type ResolvedHedgeSettings,
  type Limiter,
  RateLimiter,
  type ResolvedLimitSettings,
  type ClassifierRule,
  type Clock,
  type Drain,
  type Policy,
  PolicyScope,
  type ResolvedRateSettings,
  storeStateReporter,
  type RateStore,
  type ResolvedBreakerSettings,
  PolicyConfigError,
  RetryBudget,
  SlidingWindowBudget,
  SystemClock,
  AdaptiveTokenBucket,
  TokenBucket,
} from '../core/index.js';
import { type ResolvedPolicyConfig, describePolicy } from './describe-policy.js';
import type { BudgetPlan, ParsedResilienceConfig, PolicyPlan } from './policy-config.js';
import {
  policyFromPlan,
  unpinnedBreaker,
  unpinnedBudget,
  unpinnedHedge,
  unpinnedLimit,
} from './policy-from-plan.js';

/** What every policy built by a {@link PinnedPolicies} runs on. */
export interface PinnedPoliciesOptions {
  /** Time source of every policy, bucket and breaker. Default `SystemClock.instance`. */
  readonly clock?: Clock;
  /** Uniform [0, 1) source for jitter and breaker admission. Default `Math.random`. */
  readonly random?: () => number;
  /** Attaches telemetry or logging to each built policy (called once per name per build). */
  readonly instrument?: (name: string, policy: Policy) => Policy;
  /** The shutdown switch every built policy (and scope key) stops retrying on. Default none. */
  readonly drain?: Drain;
  /** Classifiers given in code, by policy name; each replaces that name's configured classifier. */
  readonly classifiers?: ReadonlyMap<string, Classifier>;
  /** Error rules the hosting framework puts under every default classifier (see `PlanState.defaultRules`). */
  readonly defaultRules?: readonly ClassifierRule[];
  /** The store a configured `limit.rate.shared: true` shares its limit through (the Redis store). Default none. */
  readonly rateStore?: RateStore;
}

/** The per-key template of a name, and the config it was built from. */
interface KeyedTemplate {
  readonly fingerprint: string;
  readonly template: Policy;
}

/**
 * The policies a configuration describes, with the state pinned to their names across reloads
 * (DESIGN §4): each name keeps its retry-budget bucket and its circuit breaker (a reload reconfigures
 * them, keeping their level and state); a `budget.shared` name gives one bucket to every policy of this
 * set naming it (scoped to the set, not process-wide). Keyed state follows the name the same way: the
 * name's per-key template ({@link PinnedPolicies.keyedTemplate}) is the same object while its config
 * is unchanged, and a scoped name keeps its `PolicyScope`, whose keys keep their instances while the
 * config is unchanged and keep their state while adopting the new settings when it changed
 * (`PolicyScope.adopt`; changing `scope.maximumKeys` starts every key fresh). Framework-free: the
 * Nest registry, the CLI and a file reload all build through it.
 */
export class PinnedPolicies {
  private policies = new Map<string, Policy>();
  private scopes = new Map<string, PolicyScope<string | number>>();
  private keyed = new Map<string, KeyedTemplate>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly sharedBuckets = new Map<string, TokenBucket>();
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly limiters = new Map<string, Limiter>();
  private readonly hedges = new Map<string, HedgeState>();
  private readonly measurements = new Map<string, MeasuredLatency>();
  private readonly windows = new Map<string, SlidingWindowBudget>();
  private plans: ReadonlyMap<string, PolicyPlan> = new Map();
  private readonly clock: Clock;
  private readonly random: (() => number) | undefined;
  private readonly instrument: ((name: string, policy: Policy) => Policy) | undefined;
  private readonly drain: Drain | undefined;
  private readonly classifiers: ReadonlyMap<string, Classifier>;
  private readonly defaultRules: readonly ClassifierRule[];
  private readonly rateStore: RateStore | undefined;

  constructor(options: PinnedPoliciesOptions = {}) {
    this.clock = options.clock ?? SystemClock.instance;
    this.random = options.random;
    this.instrument = options.instrument;
    this.drain = options.drain;
    this.classifiers = options.classifiers ?? new Map();
    this.defaultRules = options.defaultRules ?? [];
    this.rateStore = options.rateStore;
  }

  /** The current policy of `name`, or `undefined` when it is not in the configuration. */
  get(name: string): Policy | undefined {
    return this.policies.get(name);
  }

  /** Whether `name` is in the configuration. */
  has(name: string): boolean {
    return this.policies.has(name);
  }

  /** The configured names, in config order. */
  names(): string[] {
    return [...this.policies.keys()];
  }

  /**
   * What `name` resolved to (preset, `extends`, `defaults` and its own settings, every value filled
   * in), `undefined` when it is not in the configuration.
   */
  describe(name: string): ResolvedPolicyConfig | undefined {
    const plan = this.plans.get(name);
    return plan === undefined
      ? undefined
      : describePolicy(plan, this.policies.get(name)!, this.classifiers.has(name));
  }

  /**
   * The policy of `name` with its budget and breaker resolved per instance rather than pinned to the
   * name (a `budget.shared` bucket and `budget: false` stay): the template of keyed use outside a
   * `PolicyScope` of the name, such as per-host HTTP state. The same object until a reload changes
   * the name's config. `undefined` when the name is not in the configuration.
   */
  keyedTemplate(name: string): Policy | undefined {
    return this.keyed.get(name)?.template;
  }

  /** The `PolicyScope` of a name configured with `scope`, `undefined` otherwise. */
  scope(name: string): PolicyScope<string | number> | undefined {
    return this.scopes.get(name);
  }

  /**
   * Replaces the policies with those of `parsed`. Every policy is built first; pinned state is
   * reconfigured and the new set swapped in only once all are built, so a build that throws leaves
   * the previous policies and their state untouched.
   */
  apply(parsed: ParsedResilienceConfig): void {
    const created = new Map<string, TokenBucket>();
    const createdShared = new Map<string, TokenBucket>();
    const reconfigure: [TokenBucket, BudgetPlan & { kind: 'private' | 'shared' }][] = [];
    const createdBreakers = new Map<string, CircuitBreaker>();
    const reconfigureBreakers: [CircuitBreaker, ResolvedBreakerSettings][] = [];
    const createdLimiters = new Map<string, Limiter>();
    const reconfigureLimiters: [Limiter, ResolvedLimitSettings][] = [];
    const createdHedges = new Map<string, HedgeState>();
    const createdMeasurements = new Map<string, MeasuredLatency>();
    const reconfigureHedges: [HedgeState, ResolvedHedgeSettings][] = [];
    const createdWindows = new Map<string, SlidingWindowBudget>();
    const reconfigureWindows: [SlidingWindowBudget, BudgetPlan & { kind: 'window' }][] = [];
    const next = new Map<string, Policy>();
    const nextScopes = new Map<string, PolicyScope<string | number>>();
    const nextKeyed = new Map<string, KeyedTemplate>();
    const adopting: [PolicyScope<string | number>, Policy][] = [];
    for (const plan of parsed.policies.values()) {
      let budget: RetryBudget;
      const spec = plan.budget;
      if (spec.kind === 'none') budget = RetryBudget.none;
      else if (spec.kind === 'window') {
        let window = this.windows.get(plan.name);
        if (window === undefined) {
          window = new SlidingWindowBudget(spec.options, this.clock);
          createdWindows.set(plan.name, window);
        } else reconfigureWindows.push([window, spec]);
        budget = RetryBudget.using(window);
      } else {
        const [pinned, pending, key] =
          spec.kind === 'shared'
            ? [this.sharedBuckets, createdShared, spec.sharedName]
            : [this.buckets, created, plan.name];
        let bucket = pinned.get(key) ?? pending.get(key);
        if (bucket === undefined) {
          // A policy's own budget is the adaptive default; a shared one is the static bucket.
          bucket =
            spec.kind === 'shared'
              ? new TokenBucket(spec.options, this.clock)
              : new AdaptiveTokenBucket(spec.options, this.clock);
          pending.set(key, bucket);
        } else if (pinned.has(key)) reconfigure.push([bucket, spec]);
        budget = RetryBudget.using(bucket);
      }
      let breaker: Breaker | undefined;
      if (plan.breaker !== undefined) {
        let instance = this.breakers.get(plan.name);
        if (instance === undefined) {
          instance = this.createBreaker(plan.name, plan.breaker);
          createdBreakers.set(plan.name, instance);
        } else reconfigureBreakers.push([instance, plan.breaker]);
        breaker = Breaker.using(instance);
      }
      let limit: Limit | undefined;
      const limitSettings = this.withStore(plan);
      if (limitSettings !== undefined) {
        let instance = this.limiters.get(plan.name);
        // A change between a concurrency and a rate limit (or a local and a shared one) starts a new limiter.
        if (
          instance === undefined ||
          instance instanceof RateLimiter !== (limitSettings.kind === 'rate') ||
          (instance instanceof RateLimiter &&
            instance.settings.shared !== (limitSettings as ResolvedRateSettings).shared)
        ) {
          instance = this.createLimiter(plan.name, limitSettings);
          createdLimiters.set(plan.name, instance);
        } else reconfigureLimiters.push([instance, limitSettings]);
        limit = Limit.using(instance);
      }
      // What a hedge learnt (its latency window, win rate) is pinned to the name: a reload keeps it.
      let hedge: Hedge | undefined;
      if (plan.hedge !== undefined) {
        let state = this.hedges.get(plan.name);
        if (state === undefined) {
          state = new HedgeState(plan.hedge);
          createdHedges.set(plan.name, state);
        } else reconfigureHedges.push([state, plan.hedge]);
        hedge = Hedge.using(state);
      }
      // What the attempt ceiling and a measured backoff measured is pinned to the name: a reload keeps it.
      let measurements: MeasuredLatency | undefined;
      if (plan.attemptCeiling !== undefined || plan.changes.backoff instanceof MeasuredBackoff) {
        measurements = this.measurements.get(plan.name);
        if (measurements === undefined) {
          measurements = new MeasuredLatency();
          createdMeasurements.set(plan.name, measurements);
        }
      }
      const policy = policyFromPlan(plan, {
        budget,
        breaker,
        limit,
        hedge,
        measurements,
        clock: this.clock,
        random: this.random,
        drain: this.drain,
        classifier: this.classifiers.get(plan.name),
        defaultRules: this.defaultRules,
      });
      const registered = this.instrument?.(plan.name, policy) ?? policy;
      next.set(plan.name, registered);
      const fingerprint = planFingerprint(plan);
      const kept = this.keyed.get(plan.name);
      const keyed =
        kept?.fingerprint === fingerprint
          ? kept
          : { fingerprint, template: keyedTemplate(registered, plan, limitSettings) };
      nextKeyed.set(plan.name, keyed);
      if (plan.scope !== undefined) {
        const scope = this.scopes.get(plan.name);
        if (scope !== undefined && scope.maximumKeys === plan.scope.maximumKeys) {
          nextScopes.set(plan.name, scope);
          adopting.push([scope, keyed.template]);
        } else
          nextScopes.set(
            plan.name,
            new PolicyScope(keyed.template, { maximumKeys: plan.scope.maximumKeys }),
          );
      }
    }
    for (const [bucket, spec] of reconfigure) bucket.reconfigure(spec.options);
    for (const [instance, settings] of reconfigureBreakers) instance.reconfigure(settings);
    // A resized limiter keeps its slots held and its queue: a larger limit starts queued callers now.
    // A rate limiter keeps the tokens owed and adopts the new rate (no refill, no reset).
    for (const [instance, settings] of reconfigureLimiters) reconfigureLimiter(instance, settings);
    // A concurrency limiter no policy uses any more (its limit removed, turned into a rate limit, or
    // its name gone) admits its queued callers now: they would wait on calls nothing bounds.
    for (const [name, instance] of this.limiters)
      if (
        instance instanceof ConcurrencyLimiter &&
        instance.limit < MAXIMUM_LIMIT &&
        next.get(name)?.limiter() !== instance
      )
        instance.reconfigure({ kind: 'concurrency', limit: MAXIMUM_LIMIT, queue: 0 });
    for (const [name, instance] of createdLimiters) this.limiters.set(name, instance);
    for (const [state, settings] of reconfigureHedges) state.reconfigure(settings);
    for (const [name, state] of createdHedges) this.hedges.set(name, state);
    for (const [name, state] of createdMeasurements) this.measurements.set(name, state);
    for (const [window, spec] of reconfigureWindows) window.reconfigure(spec.options);
    for (const [name, window] of createdWindows) this.windows.set(name, window);
    for (const [name, instance] of createdBreakers) this.breakers.set(name, instance);
    for (const [key, bucket] of created) this.buckets.set(key, bucket);
    for (const [key, bucket] of createdShared) this.sharedBuckets.set(key, bucket);
    for (const [scope, template] of adopting) scope.adopt(template);
    // A scope no longer configured (or rebuilt for a new maximumKeys) runs no more calls: its observers drop its keys.
    for (const [name, scope] of this.scopes) if (nextScopes.get(name) !== scope) scope.clear();
    this.policies = next;
    this.scopes = nextScopes;
    this.keyed = nextKeyed;
    this.plans = parsed.policies;
  }

  /**
   * A limiter pinned to `name`. An adaptive limit pauses learning while the saturation of whatever
   * policy holds the name now says the event loop is saturated.
   */
  private createLimiter(name: string, settings: ResolvedLimitSettings): Limiter {
    if (settings.kind === 'rate')
      return new RateLimiter(settings, this.clock, {
        name,
        onStoreState: storeStateReporter(() => this.policies.get(name)),
      });
    return new ConcurrencyLimiter(
      settings,
      this.clock,
      () => this.policies.get(name)?.options.saturation?.saturated === true,
    );
  }

  /**
   * The plan's limit settings, a configured `rate.shared: true` given the application's store.
   * @throws PolicyConfigError (field `policies.<name>.limit.rate.shared`) when no store was given
   */
  private withStore(plan: PolicyPlan): ResolvedLimitSettings | undefined {
    const settings = plan.limit;
    if (settings?.kind !== 'rate' || !settings.shared || settings.store !== undefined)
      return settings;
    if (this.rateStore === undefined) {
      throw new PolicyConfigError(
        `policies.${plan.name}.limit.rate.shared`,
        true,
        'needs a store: give the module one (ResilienceModule.forRoot({ redis: { url } }) with @nresilience/nestjs/redis)',
      );
    }
    return { ...settings, store: this.rateStore };
  }

  /** A breaker pinned to `name`; its state changes reach the listener of whatever policy holds the name now. */
  private createBreaker(name: string, settings: ResolvedBreakerSettings): CircuitBreaker {
    return new CircuitBreaker(settings, {
      clock: this.clock,
      random: this.random ?? Math.random,
      onTransition: breakerTransitionReporter(() => this.policies.get(name)),
    });
  }
}

/** Gives a pinned limiter its new settings (of its own kind: a change of kind built a new one). */
function reconfigureLimiter(instance: Limiter, settings: ResolvedLimitSettings): void {
  if (instance instanceof RateLimiter) {
    if (settings.kind === 'rate') instance.reconfigure(settings);
  } else if (settings.kind !== 'rate') instance.reconfigure(settings);
}

/**
 * The template of a scoped name's keys: the registered policy (settings, listeners) with a budget and
 * a breaker resolved per key instead of the ones pinned to the name. A `budget.shared` bucket and
 * `budget: false` stay as they are.
 */
function keyedTemplate(
  registered: Policy,
  plan: PolicyPlan,
  limit: ResolvedLimitSettings | undefined,
): Policy {
  return registered.with({
    budget:
      plan.budget.kind === 'private' || plan.budget.kind === 'window'
        ? unpinnedBudget(plan.budget)
        : registered.options.budget,
    breaker: unpinnedBreaker(plan),
    limit: limit === undefined ? unpinnedLimit(plan) : Limit.of(limit),
    hedge: unpinnedHedge(plan),
    // Each key measures its own dependency.
    attemptCeiling:
      plan.attemptCeiling === undefined ? undefined : AttemptCeiling.measured(plan.attemptCeiling),
    backoff: plan.changes.backoff ?? registered.options.backoff,
  });
}

/** Equal for two plans that build the same policy: a reload keeps the keyed template (and every key's instance) of an unchanged name. */
function planFingerprint(plan: PolicyPlan): string {
  const described = {
    preset: plan.presetName,
    changes: plan.changes,
    budget: plan.budget,
    breaker: plan.breaker,
    scope: plan.scope,
    classifier: plan.classifier,
    limit: plan.limit,
    hedge: plan.hedge,
    attemptCeiling: plan.attemptCeiling,
  };
  // Functions (jitter curves) by their source; an explicit undefined (a removed bound) stays distinct from an absent key.
  return JSON.stringify(described, (_key, value: unknown) =>
    typeof value === 'function' ? `fn:${String(value)}` : value === undefined ? null : value,
  );
}
