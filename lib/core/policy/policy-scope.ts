import type { BreakerSnapshot } from '../breaker/breaker-state.js';
import { markUnlabeledScopeKey } from './unlabeled-keys.js';
import type { Breaker } from '../breaker/breaker-value.js';
import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { RetryBudget } from '../budget/retry-budget.js';
import { AdaptiveTokenBucket, TokenBucket } from '../budget/retry-budget.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import { SlidingWindowBudget } from '../budget/sliding-window-budget.js';
import type { DependencyLabel } from '../events/call-events.js';
import { ClockSweepCache } from './clock-sweep-cache.js';
import { PolicyConfigError } from '../errors.js';
import { MAXIMUM_KEYS_RULE } from '../rules/option-rules.js';
import {
  checkOptions,
  checkValue,
  given,
  unboundedIntegerRule,
  valueRule,
} from '../rules/value-rule.js';
import { Policy, type PolicyState } from './policy.js';
import type { Limit, Limiter } from '../limits/limit-value.js';
import { RateLimiter } from '../limits/rate-limiter.js';
import { ConcurrencyLimiter } from '../limits/concurrency-limiter.js';
import { breakerTransitionReporter, retired } from '../execution/observer.js';
import type { ResolvedPolicyOptions } from '../execution/executable-policy.js';

/** `limit` of {@link PolicyScope.entries}. */
const ENTRIES_LIMIT_RULE = unboundedIntegerRule(0);

/** Default of {@link PolicyScopeOptions.maximumKeys}. */
export const DEFAULT_MAXIMUM_KEYS = 1024;

/** Options of a {@link PolicyScope}. */
export interface PolicyScopeOptions<K> {
  /**
   * The most keys held at once, an integer >= 1. Default {@link DEFAULT_MAXIMUM_KEYS} (1024). Size it
   * above the number of keys active at the same time: an evicted key loses its state (but for a
   * limiter its calls still hold, kept until they end).
   */
  maximumKeys?: number;
  /**
   * Customises a key's policy, once, when the key is first seen (and again if it returns after being
   * evicted or deleted). Receives the key and the template; returns the policy whose settings the key
   * runs, typically `policy.with({...})` or another prepared policy. The returned value's settings are
   * copied into a fresh instance, so a key's state is its own even when `shape` returns a shared value
   * (the template itself, a module constant). Errors it throws reach the `for(key)` caller; nothing is
   * cached then.
   */
  shape?: (key: K, policy: Policy) => Policy;
  /**
   * What a key stands for in telemetry (DESIGN §7): the dependency's host or service, carried by
   * every event of the key's policy (`CallEvent.dependency`) and recorded as `nresilience.host` /
   * `nresilience.service`. Only for keys that name a dependency (the HTTP client labels origins,
   * the gRPC interceptor services): never a tenant or an id. Called once per key, when its policy
   * is created. Default none (a key's events carry the template's name only).
   */
  label?: (key: K) => DependencyLabel | undefined;
}

/** A reading of one key of a scope, for health checks and dashboards. */
export interface PolicyScopeEntry<K> {
  /** The key. */
  readonly key: K;
  /** The key's policy (the instance {@link PolicyScope.for} returns). */
  readonly policy: Policy;
  /** The key's breaker reading, `undefined` when its policy has no breaker. */
  readonly breaker: BreakerSnapshot | undefined;
  /** Spent share of the key's retry budget, 0..1 (0 = full); `undefined` when the budget is off. */
  readonly budgetUtilization: number | undefined;
}

const SCOPE_RULES = {
  maximumKeys: MAXIMUM_KEYS_RULE,
  shape: valueRule('must be a function (key, policy) => Policy', (v) => typeof v === 'function'),
  label: valueRule(
    'must be a function (key) => { host?, service? }',
    (v) => typeof v === 'function',
  ),
};

/**
 * What a scope holds for one key: the instance `for(key)` returns, and the state every instance of
 * the key shares (its own breaker and budget, the option values they were made under).
 */
class KeyEntry implements PolicyState {
  policy!: Policy;
  breaker: CircuitBreaker | undefined = undefined;
  breakerValue: Breaker | undefined = undefined;
  bucket: RetryBudgetState | undefined = undefined;
  budgetValue: RetryBudget | undefined = undefined;
  /** The key's own limiter once a call resolved it (written by its instance, see `Policy.limiter`). */
  limiter: Limiter | undefined = undefined;
  private limitValue: Limit | undefined = undefined;

  /**
   * @param dependency the key's telemetry label
   * @param limiter the limiter the key held when it was last let go with calls still holding it
   */
  constructor(
    readonly dependency: DependencyLabel | undefined,
    limiter: Limiter | undefined = undefined,
  ) {
    this.limiter = limiter;
  }

  /** Makes `settings` this key's instance, keeping (and reconfiguring) its state where the kind allows. */
  adopt(settings: ResolvedPolicyOptions): void {
    this.adoptBreaker(settings);
    this.adoptBudget(settings);
    this.adoptLimiter(settings);
    this.policy = new Policy(settings, this.dependency, this);
    if (this.dependency === undefined) markUnlabeledScopeKey(this.policy);
  }

  /**
   * Keeps the key's limiter under new settings (its calls in flight, its queue, its tokens owed): the
   * same kind reconfigured, another kind or a shared one (`Limit.using`) resolved anew.
   */
  private adoptLimiter(o: ResolvedPolicyOptions): void {
    const value = o.limit;
    const limiter = this.limiter;
    if (value === undefined || value.kind !== 'perOwner' || limiter === undefined) {
      this.limiter = value?.kind === 'perOwner' ? limiter : undefined;
    } else if (value !== this.limitValue) {
      const settings = value.settings;
      if (limiter instanceof RateLimiter) {
        if (settings.kind === 'rate') limiter.reconfigure(settings);
        else this.limiter = undefined;
      } else if (settings.kind !== 'rate') limiter.reconfigure(settings);
      else this.limiter = undefined;
    }
    this.limitValue = value;
  }

  private adoptBreaker(o: ResolvedPolicyOptions): void {
    const value = o.breaker;
    // A pinned breaker (`Breaker.using`) is explicitly shared: the instance resolves it from its options.
    if (value === undefined || value.kind !== 'perOwner') {
      this.breaker = undefined;
    } else if (this.breaker === undefined) {
      // Transitions reach whichever instance holds the key now, so its current listeners hear them.
      this.breaker = value.resolve(
        this,
        o.clock,
        o.random,
        breakerTransitionReporter(() => this.policy),
      );
    } else if (value !== this.breakerValue) {
      this.breaker.reconfigure(value.settings);
    }
    this.breakerValue = this.breaker === undefined ? undefined : value;
  }

  private adoptBudget(o: ResolvedPolicyOptions): void {
    const value = o.budget;
    const kind = value.kind;
    // Only a budget resolved per owner is the key's own; `of`, `shared` and `using` stay shared.
    if (kind !== 'automatic' && kind !== 'tokenBucket' && kind !== 'slidingWindow') {
      this.bucket = undefined;
    } else if (this.bucket === undefined || !sameShape(kind, this.bucket)) {
      this.bucket = value.resolve(this, o.clock);
    } else if (value !== this.budgetValue) {
      (this.bucket as TokenBucket | SlidingWindowBudget).reconfigure(value.options as never);
    }
    this.budgetValue = this.bucket === undefined ? undefined : value;
  }
}

/**
 * A policy per key: per tenant, shard or channel, so one key's failures open only its own breaker
 * and spend only its own retry budget (DESIGN §3.11).
 *
 * ```ts
 * const tenants = new PolicyScope<string>(Resilience.http.with({ name: 'billing' }), {
 *   maximumKeys: 500,
 *   shape: (tenant, policy) => (tenant.startsWith('premium-') ? policy.with({ attempts: 5 }) : policy),
 * });
 * await tenants.for(tenantId).run(({ signal }) => billing.charge(order, { signal }));
 * ```
 *
 * **What is per key.** Each key's policy is a distinct `Policy` instance with the template's settings
 * (or those `shape` returned) and the template's name (metrics stay per policy, not per tenant; give
 * keys their own names in `shape` if you want them). State the policy resolves per instance is per
 * key, held by the scope for the key: `RetryBudget.automatic` / `automaticWith(...)` buckets and
 * `slidingWindow(...)` windows, `Breaker.default` / `Breaker.with(...)` breakers (their error and
 * latency baselines included). State that is explicitly shared stays shared by every key:
 * `RetryBudget.of(...)` (one bucket per budget value), `RetryBudget.shared(name)`,
 * `RetryBudget.using(bucket)` and `Breaker.using(instance)`.
 *
 * **New settings.** {@link PolicyScope.adopt} replaces the template (a config reload): every held
 * key keeps its state and runs the new settings from its next `for(key)`, exactly as a name's pinned
 * breaker, bucket and limiter do across a reload — an open breaker stays open until its break ends, then
 * follows the new thresholds; a bucket keeps its level under the new parameters; a limiter keeps its
 * calls in flight, its queue and its tokens owed under the new limit. A key whose budget
 * changes kind (token bucket ↔ sliding window) starts that part fresh; one whose breaker is removed
 * loses it.
 *
 * **Eviction.** At most `maximumKeys` keys are held. `for(key)` of a cached key marks it recently
 * used: O(1), no allocation, no scan, nothing awaited. A new key when full evicts one entry by an
 * approximate LRU clock sweep (second chance): entries looked up since the sweep hand last passed
 * them survive, the first one not looked up goes; a sweep examines at most 64 entries, so inserting
 * is O(1) too. A key that is new and never looked up again is the first candidate.
 * An evicted (or deleted) key that returns starts fresh: a full retry budget and a closed breaker
 * that does not remember having been open. The evicted (or deleted) instance's observer is told
 * (`CallObserver.retired`): telemetry drops its series. Calls already running under an evicted key's policy
 * finish under it (they hold the instance).
 *
 * **A key's limit holds through eviction.** A key let go (evicted, deleted, cleared) while calls still
 * hold its limiter — slots in flight or callers queued, or tokens owed to a local rate limit — leaves
 * that limiter behind, and the key, if it returns, takes it up again: its concurrency limit counts
 * the calls still running, its rate limit the tokens they spent. Everything else of the key starts
 * fresh. `maximumKeys` stays the bound on keys held (and on their breakers and buckets); a limiter
 * left behind is a few hundred bytes and is dropped once no call holds it: every lookup looks over a
 * few (4), `clear()` and {@link PolicyScope.keptLimiters} all of them, so their number is bounded by
 * the calls in flight when their keys were let go, and falls back to the calls still holding them.
 *
 * **Memory bound.** Keys × per-key cost, measured on Node 20 (`heapUsed` and `arrayBuffers` before
 * and after 1024 keys that each ran one call): ≈ 0.2 KB for the entry, its key string and its policy
 * instance; + ≈ 0.2 KB once its retry-budget bucket exists; + ≈ 14.5 KB once its breaker exists at the
 * default windows (≈ 2 KB of heap plus ≈ 12.5 KB of typed arrays outside the JS heap for the rolling
 * outcome and latency windows; longer windows cost more). So a scope of the `Resilience.http` shape
 * holds ≈ 15 KB per key, ≈ 15 MB at the default 1024 keys; without a breaker ≈ 0.4 KB per key.
 * Nothing else grows with traffic.
 */
export class PolicyScope<K> {
  /** The most keys held at once. */
  readonly maximumKeys: number;
  private current: Policy;
  private readonly shape: ((key: K, policy: Policy) => Policy) | undefined;
  private readonly label: ((key: K) => DependencyLabel | undefined) | undefined;
  private readonly cache: ClockSweepCache<K, KeyEntry>;
  private readonly kept = new Map<K, Limiter>();

  /**
   * @param template the policy every key starts from (its settings; its own state is never used by keys)
   * @param options `{ maximumKeys = 1024, shape?, label? }`
   * @throws PolicyConfigError naming `template`, `maximumKeys` (an integer in [1, 1000000]), `shape` or `label`
   *   (functions) or an unknown option.
   */
  constructor(template: Policy, options: PolicyScopeOptions<K> = {}) {
    checkTemplate(template);
    checkOptions(options, SCOPE_RULES, '', 'scope option');
    const maximumKeys = given(options.maximumKeys, DEFAULT_MAXIMUM_KEYS);
    this.current = template;
    this.maximumKeys = maximumKeys;
    this.shape = options.shape;
    this.label = options.label;
    this.cache = new ClockSweepCache<K, KeyEntry>(maximumKeys);
  }

  /** The policy every key starts from (the latest one given to {@link PolicyScope.adopt}). */
  get template(): Policy {
    return this.current;
  }

  /** Number of keys held now (<= {@link maximumKeys}). */
  get size(): number {
    return this.cache.size;
  }

  /**
   * The policy of `key`: the same instance while the key stays cached (and the template is not
   * replaced), a fresh one (through `shape`) when it is first seen or comes back after eviction.
   * Marks the key recently used.
   * @param key any value usable as a `Map` key (strings and numbers are compared by value, objects by
   *   identity) except `undefined` and `null`
   * @throws TypeError for an `undefined` or `null` key (usually a missing tenant id that would
   *   otherwise pool every such caller under one key); PolicyConfigError (field `shape`) when `shape`
   *   returns something other than a Policy; whatever `shape` throws.
   */
  for(key: K): Policy {
    if (this.kept.size !== 0) this.letGoIdle(KEPT_LOOKS);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached.policy;
    if (key === undefined || key === null) {
      throw new TypeError(
        `PolicyScope${this.current.name ? ` "${this.current.name}"` : ''}: a key must not be ${String(key)}`,
      );
    }
    const settings = this.settingsFor(key, this.current);
    const label = this.label?.(key);
    const kept = this.kept.get(key);
    if (kept !== undefined) this.kept.delete(key);
    const entry = new KeyEntry(label === undefined ? undefined : Object.freeze({ ...label }), kept);
    entry.adopt(settings);
    const evicted = this.cache.set(key, entry);
    if (evicted !== undefined) this.letGo(evicted.key, evicted.value);
    return entry.policy;
  }

  /**
   * Limiters kept for keys let go while calls still held them (see {@link PolicyScope}, "A key's
   * limit holds through eviction"); a returning key takes its own up again. Reading it first drops
   * every kept limiter no call holds any more.
   */
  get keptLimiters(): number {
    this.letGoIdle(Infinity);
    return this.kept.size;
  }

  /** Retires a key's instance, keeping its limiter while calls still hold it. */
  private letGo(key: K, entry: KeyEntry): void {
    const limiter = entry.limiter;
    if (limiter !== undefined && inUse(limiter)) this.kept.set(key, limiter);
    retired(entry.policy);
  }

  /** Looks over up to `looks` kept limiters (oldest first), dropping those no call holds any more. */
  private letGoIdle(looks: number): void {
    if (this.kept.size === 0) return;
    const looked: [K, Limiter][] = [];
    for (const kept of this.kept) if (looked.push(kept) === looks) break;
    for (const [key, limiter] of looked) {
      this.kept.delete(key);
      // One still held goes to the back, so the next looks reach the others.
      if (inUse(limiter)) this.kept.set(key, limiter);
    }
  }

  /**
   * Makes `template` the policy keys start from, keeping every held key's state: each key gets a new
   * instance with the new settings (through `shape`) over its own breaker and budget, which adopt
   * the new parameters keeping their state (`CircuitBreaker.reconfigure`, the bucket's
   * `reconfigure`). Keys stay cached where they were; calls already running finish under the
   * instance they started with. The same `template` again changes nothing.
   * @throws PolicyConfigError (field `template`) for anything but a Policy; whatever `shape` throws
   *   (nothing has changed then).
   */
  adopt(template: Policy): void {
    checkTemplate(template);
    if (template === this.current) return;
    const planned: [KeyEntry, ResolvedPolicyOptions][] = [];
    this.cache.forEach(Infinity, (entry, key) =>
      planned.push([entry, this.settingsFor(key, template)]),
    );
    this.current = template;
    for (const [entry, settings] of planned) entry.adopt(settings);
  }

  /** The policy of `key` if cached, without marking it used or creating it; otherwise `undefined`. */
  peek(key: K): Policy | undefined {
    return this.cache.peek(key)?.policy;
  }

  /** Whether `key` is cached (does not mark it used). */
  has(key: K): boolean {
    return this.cache.has(key);
  }

  /** The cached keys, oldest first (a copy). */
  keys(): K[] {
    return this.cache.keys();
  }

  /** Forgets `key` and its state (it starts fresh if it returns). @returns whether it was cached. */
  delete(key: K): boolean {
    const entry = this.cache.peek(key);
    if (entry === undefined) return false;
    this.cache.delete(key);
    this.letGo(key, entry);
    return true;
  }

  /** Forgets every key and its state (a limiter still held by calls is kept until they end). */
  clear(): void {
    const entries: [K, KeyEntry][] = [];
    this.cache.forEach(Infinity, (entry, key) => entries.push([key, entry]));
    this.cache.clear();
    for (const [key, entry] of entries) this.letGo(key, entry);
    this.letGoIdle(Infinity);
  }

  /**
   * Readings of up to `limit` keys, oldest first, for health indicators: each key's breaker snapshot
   * and budget utilization. Does not mark keys used. Reading resolves a key's breaker and bucket if
   * no call has yet (they would be created by its first call anyway).
   * @param limit the most entries returned, an integer >= 0; default 100
   * @throws PolicyConfigError (field `limit`) for anything else
   */
  entries(limit = 100): PolicyScopeEntry<K>[] {
    checkValue(ENTRIES_LIMIT_RULE, 'limit', limit);
    const result: PolicyScopeEntry<K>[] = [];
    this.cache.forEach(limit, ({ policy }, key) => {
      result.push({
        key,
        policy,
        breaker: policy.breaker()?.snapshot(),
        budgetUtilization: policy.bucket()?.utilization,
      });
    });
    return result;
  }

  /** The settings `key` runs under `template` (through `shape`). */
  private settingsFor(key: K, template: Policy): ResolvedPolicyOptions {
    if (this.shape === undefined) return template.options;
    const shaped: unknown = this.shape(key, template);
    if (!(shaped instanceof Policy)) {
      throw new PolicyConfigError(
        'shape',
        shaped,
        `must return a Policy for key ${String(key)} (e.g. policy.with({ attempts: 5 }) or policy)`,
      );
    }
    return shaped.options;
  }
}

/** Kept limiters looked over per new key: enough to drop them about as fast as keys are let go. */
const KEPT_LOOKS = 4;

/**
 * Whether calls still hold `limiter`: slots in flight or callers queued (a concurrency limit), or
 * tokens owed (a local rate limit not yet refilled to its burst). A returning key given a fresh one
 * would admit past its limit.
 */
function inUse(limiter: Limiter): boolean {
  if (limiter instanceof ConcurrencyLimiter) return limiter.inflight > 0 || limiter.queued > 0;
  const snapshot = limiter.snapshot();
  return snapshot.shared === undefined && snapshot.available < limiter.settings.burst;
}

function checkTemplate(template: unknown): asserts template is Policy {
  if (!(template instanceof Policy)) {
    throw new PolicyConfigError(
      'template',
      template,
      'must be a Policy (e.g. Resilience.http.with({ name }))',
    );
  }
}

/** Whether a key's budget state is of the shape `kind` resolves to (else a reload starts it fresh). */
function sameShape(
  kind: 'automatic' | 'tokenBucket' | 'slidingWindow',
  state: RetryBudgetState,
): boolean {
  if (kind === 'slidingWindow') return state instanceof SlidingWindowBudget;
  return kind === 'automatic'
    ? state instanceof AdaptiveTokenBucket
    : state instanceof TokenBucket && !(state instanceof AdaptiveTokenBucket);
}
