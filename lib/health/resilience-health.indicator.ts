import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import {
  type BreakerState,
  type CircuitBreaker,
  type Limiter,
  RateLimiter,
  type RetryBudgetState,
} from '../core/index.js';
import { PolicyRegistry } from '../nest/policy-registry.js';

/** Default of {@link ResilienceHealthOptions.maximumKeys}: scope keys listed per scoped entry. */
export const DEFAULT_HEALTH_KEYS = 20;

/**
 * What a policy's entry says about it:
 * - `ok`: its breaker is closed (or it has none) and its retry budget can fund a retry;
 * - `degraded`: its breaker is not closed (`open`, `halfOpen`, `recovering`, `isolated`: calls are
 *   being refused or rationed) or its retry budget is exhausted (retries are being refused);
 * - `unregistered`: the name given in the options is not registered (never makes the check down).
 */
export type PolicyHealthStatus = 'ok' | 'degraded' | 'unregistered';

/** The reading of one breaker-and-budget pair, as shown in health details. */
export interface BreakerHealth {
  /** `ok` or `degraded` (see {@link PolicyHealthStatus}). */
  status: Exclude<PolicyHealthStatus, 'unregistered'>;
  /** The breaker's state, `'none'` when the policy has no breaker. */
  breaker: BreakerState | 'none';
  /**
   * Ms of break left, rounded up to a whole ms: the hint a call refused now would carry (while
   * isolated, at least the configured `breakDuration`); 0 unless `open` or `isolated`.
   */
  breakRemaining: number;
  /** Spent share of the retry budget, 0..1 (0 = full bucket); `null` when the budget is off. */
  budgetUtilization: number | null;
  /**
   * The limit's state, present only when the policy has a `limit`. A full limiter (or a spent rate
   * limit) is not trouble (it is doing its job): it never makes the entry `degraded`; nor does a
   * shared rate limit's store being down (calls carry on under the local share: see `store`).
   */
  limiter?: LimiterHealth | RateLimitHealth;
}

/** A rate limiter's reading in health details. */
export interface RateLimitHealth {
  kind: 'rate';
  /** Calls allowed per `per` ms. */
  limit: number;
  /** ms */
  per: number;
  /** Calls that may start at once. */
  burst: number;
  /** Whole tokens that could be taken now. */
  available: number;
  /** A shared limit's store: its name, its state (`ready`, `down`, …) and whether calls run on the local share; absent for a local limit. */
  store?: { name: string; state: string; degraded: boolean };
}

/** A concurrency limiter's reading in health details. */
export interface LimiterHealth {
  /** `concurrency` (a fixed bulkhead) or `adaptive`. */
  kind: 'concurrency' | 'adaptive';
  /** Calls allowed in flight at once now (the adaptive limit as it stands). */
  limit: number;
  /** Calls holding a slot now. */
  inflight: number;
  /** Callers waiting for a slot now. */
  queued: number;
  /** The most callers that may wait. */
  queue: number;
}

/**
 * One policy's entry in the health details. For a name whose calls run per dependency key (the hosts
 * of `ResilientHttpModule` or of a resilient fetch given `registry.handle(name)`, the services of a
 * gRPC interceptor given the handle, or any scope given in `scopes` whose keys carry a host or
 * service) the entry summarises those keys: `status` is `degraded` while any of them is, `breaker`
 * is the worst state among the name's own breaker and theirs (`isolated` > `open` > `halfOpen` >
 * `recovering` > `closed`), `breakRemaining` and `budgetUtilization` the largest, so `downWhenOpen`
 * by name applies to its hosts or services, as the name's `nresilience.breaker.state` gauge does.
 * Keys of a tenant scope (`scope` in config, `PolicyScope` without a `label`) are listed but their
 * trouble is their own: one tenant's open breaker says nothing about the dependency.
 */
export interface PolicyHealth extends Partial<Omit<BreakerHealth, 'status'>> {
  /** See {@link PolicyHealthStatus}. */
  status: PolicyHealthStatus;
  /** Keys held by the entry's scopes (its hosts or services, its configured scope, or `scopes[name]`). */
  keyCount?: number;
  /** How many of those keys are `degraded` (all of them, not only the listed ones). */
  keysDegraded?: number;
  /**
   * Up to `maximumKeys` keys, degraded ones first, then oldest first; keyed by `String(key)` (an
   * origin such as `https://pay.example.com`, a service such as `shop.v1.Orders`, a tenant id;
   * `__proto__` included, as an own property).
   */
  keys?: Record<string, BreakerHealth>;
  /** Keys held but not listed (`keyCount - listed`). */
  keysNotShown?: number;
}

/** What the indicator reads of a policy: its breaker, budget and (when it has one) limiter. */
export interface GuardedReadable {
  breaker(): CircuitBreaker | undefined;
  bucket(): RetryBudgetState | undefined;
  /** The concurrency limiter; leave it out for a policy without one. */
  limiter?(): Limiter | undefined;
  /** The host or service the key stands for: it makes the key count in the entry's summary. */
  readonly dependency?: object | undefined;
  /** The policy's options; a policy whose `limit` is undefined is not asked for a limiter (that would create one). */
  readonly options?: { readonly limit?: unknown };
}

/**
 * A keyed scope as the indicator reads it: `PolicyScope` from `@nresilience/nestjs/core` fits (its
 * `size` and `entries(limit)`); declared structurally so this module does not depend on its internals.
 */
export interface ScopeReadable {
  /** Keys held now. */
  readonly size: number;
  /** Readings of up to `limit` keys. */
  entries(limit?: number): ReadonlyArray<{
    readonly key: unknown;
    /**
     * The key's policy, read the same way as a named policy; a `dependency` (the host or service it
     * stands for) makes the key count in the entry's summary.
     */
    readonly policy: GuardedReadable;
  }>;
}

/** Options of {@link ResilienceHealthIndicator.isHealthy}. */
export interface ResilienceHealthOptions {
  /** Registered policy names to report, in this order. Default: every registered name, in config order. */
  policies?: readonly string[];
  /**
   * Policy names whose `open` or `isolated` breaker makes this check report `down` (a readiness check
   * opting in, per policy). Names here are reported even when `policies` leaves them out. `halfOpen`
   * and `recovering` never report down: probes and the recovery ramp need traffic, and a pod taken out
   * of rotation would never see the probe that closes its breaker. Default: none (never down).
   */
  downWhenOpen?: readonly string[];
  /**
   * Report `down` while the application shuts down — from its first shutdown hook, so at once on
   * SIGTERM and for the whole of `ResilienceModule`'s `shutdown: { grace }` — so the load balancer
   * stops sending before the server stops accepting (a readiness check opting in). Leave it off on a
   * liveness check. Default `false`.
   */
  downWhenShuttingDown?: boolean;
  /**
   * Keyed scopes to report per key, by entry name: a registered policy name lists these keys in that
   * policy's entry (instead of its configured scope and tracked hosts or services, which are still
   * summarised); another name gets an entry of its own (`status` `ok` unless keys that carry a host
   * or service are degraded). Policies configured with `scope`, and names whose hosts or services
   * are tracked by the registry (clients built from `registry.handle(name)`), list their keys
   * without this option. Default: none.
   */
  scopes?: Readonly<Record<string, ScopeReadable>>;
  /** The most keys listed per scope, an integer >= 0. Default {@link DEFAULT_HEALTH_KEYS} (20). */
  maximumKeys?: number;
}

/**
 * A terminus health indicator reporting the library's guards: for each policy its breaker state, the
 * break left and the retry budget's utilization (DESIGN §4). Built on terminus 12's
 * `HealthIndicatorService`; reads the application's `PolicyRegistry` (so `ResilienceModule` must be
 * global, its default).
 *
 * The check is `up` even when breakers are open: an open breaker is shown as `degraded` in the details.
 * The process is then doing what it should (failing fast, shedding load); a `down` liveness answer
 * would make Kubernetes restart the pod, dropping the breaker's state and sending the full load at
 * the dependency again, and a restart does not repair the dependency. A readiness check may opt in
 * per policy with `downWhenOpen`.
 *
 * ```ts
 * @Get('ready')
 * @HealthCheck()
 * ready() {
 *   return this.health.check([() => this.resilience.isHealthy('resilience', { downWhenOpen: ['payments'] })]);
 * }
 * ```
 * Result details: `{ resilience: { status: 'up', payments: { status: 'degraded', breaker: 'open',
 * breakRemaining: 14900, budgetUtilization: 0.2 }, … } }`. A policy literally named `status` is listed
 * as `policy:status` (terminus reserves `status`).
 */
@Injectable()
export class ResilienceHealthIndicator {
  /**
   * @param indicators terminus' `HealthIndicatorService` (from `TerminusModule`)
   * @param registry the application's policy registry (from `ResilienceModule`)
   */
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly registry: PolicyRegistry,
  ) {}

  /**
   * Reads every requested policy now (no I/O, nothing awaited) and reports under `key`.
   * @param key the indicator's key in the health result; default `'resilience'`
   * @param options which policies, which of them may report down, scopes to list per key
   * @returns `{ [key]: { status: 'up' | 'down', [policy]: PolicyHealth } }`; `down` only when a
   *   `downWhenOpen` policy's breaker is `open` or `isolated`, or with `downWhenShuttingDown` while
   *   the application shuts down (terminus then answers 503)
   * @throws TypeError for malformed options (not arrays of strings, a bad `maximumKeys`, a scope
   *   without `entries`) — a configuration mistake, reported loudly rather than as a health state.
   *   Unknown policy names do not throw: they are reported as `unregistered`.
   */
  isHealthy<const Key extends string = 'resilience'>(
    key: Key = 'resilience' as Key,
    options: ResilienceHealthOptions = {},
  ): HealthIndicatorResult<Key> {
    const { names, downWhenOpen, scopes, maximumKeys } = this.readOptions(options);
    const details: Record<string, PolicyHealth> = {};
    let down = options.downWhenShuttingDown === true && this.registry.shuttingDown;
    for (const name of names) {
      const registered = this.registry.has(name);
      const given = scopes.get(name);
      if (!registered && given === undefined) {
        put(details, detailKey(name), { status: 'unregistered' });
        continue;
      }
      const own: PolicyHealth = registered ? readGuards(this.registry.get(name)) : { status: 'ok' };
      const families: ScopeReadable[] = registered ? [...this.registry.keyedFamilies(name)] : [];
      const configured = registered ? this.registry.scope(name) : undefined;
      if (configured !== undefined) families.push(configured);
      // A scope given in the options is what is listed; the tracked hosts or services still count in the summary.
      const listed = readKeys(given === undefined ? families : [given]);
      const entry = summarise(
        own,
        given === undefined ? listed : [...listed, ...readKeys(families)],
      );
      if (listed.length > 0 || given !== undefined || configured !== undefined)
        addKeys(entry, listed, maximumKeys);
      if (downWhenOpen.has(name) && (entry.breaker === 'open' || entry.breaker === 'isolated'))
        down = true;
      put(details, detailKey(name), entry);
    }
    for (const [name, scope] of scopes) {
      if (names.includes(name)) continue;
      const listed = readKeys([scope]);
      const entry = summarise({ status: 'ok' }, listed);
      addKeys(entry, listed, maximumKeys);
      put(details, detailKey(name), entry);
    }
    const session = this.indicators.check(key);
    return down ? session.down(details) : session.up(details);
  }

  private readOptions(options: ResilienceHealthOptions): {
    names: string[];
    downWhenOpen: Set<string>;
    scopes: Map<string, ScopeReadable>;
    maximumKeys: number;
  } {
    if (options === null || typeof options !== 'object')
      throw new TypeError(
        'ResilienceHealthIndicator: options must be an object { policies?, downWhenOpen?, downWhenShuttingDown?, scopes?, maximumKeys? }',
      );
    if (
      options.downWhenShuttingDown !== undefined &&
      typeof options.downWhenShuttingDown !== 'boolean'
    ) {
      throw new TypeError(
        `ResilienceHealthIndicator: downWhenShuttingDown must be a boolean, got ${String(options.downWhenShuttingDown)}`,
      );
    }
    const policies =
      options.policies === undefined
        ? this.registry.names()
        : nameList('policies', options.policies);
    const downWhenOpen =
      options.downWhenOpen === undefined ? [] : nameList('downWhenOpen', options.downWhenOpen);
    const all = [...policies];
    for (const name of downWhenOpen) if (!all.includes(name)) all.push(name);
    const maximumKeys = options.maximumKeys ?? DEFAULT_HEALTH_KEYS;
    if (typeof maximumKeys !== 'number' || !Number.isInteger(maximumKeys) || maximumKeys < 0) {
      throw new TypeError(
        `ResilienceHealthIndicator: maximumKeys must be an integer >= 0, got ${String(maximumKeys)}`,
      );
    }
    const scopes = new Map<string, ScopeReadable>();
    for (const [name, scope] of Object.entries(options.scopes ?? {})) {
      if (typeof scope?.entries !== 'function' || typeof scope.size !== 'number') {
        throw new TypeError(
          `ResilienceHealthIndicator: scopes.${name} must be a PolicyScope (size, entries(limit))`,
        );
      }
      scopes.set(name, scope);
    }
    return { names: all, downWhenOpen: new Set(downWhenOpen), scopes, maximumKeys };
  }
}

function nameList(field: string, value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
    throw new TypeError(`ResilienceHealthIndicator: ${field} must be an array of policy names`);
  }
  return value as string[];
}

function readGuards(policy: GuardedReadable): BreakerHealth {
  const breaker = policy.breaker();
  const bucket = policy.bucket();
  const state = breaker === undefined ? 'none' : breaker.state;
  const breakRemaining =
    state === 'open' || state === 'isolated' ? Math.ceil(breaker!.retryAfter()) : 0;
  // Four decimals: a health page is read by people and dashboards, not used for arithmetic.
  const utilization = bucket === undefined ? null : Math.round(bucket.utilization * 1e4) / 1e4;
  const read = health(
    state,
    breakRemaining,
    utilization,
    bucket !== undefined && !bucket.canFundRetry,
  );
  const limiter = policy.options?.limit === undefined ? undefined : policy.limiter?.();
  if (limiter !== undefined) {
    if (limiter instanceof RateLimiter) {
      const { limit, per, burst, available, shared } = limiter.snapshot();
      read.limiter = { kind: 'rate', limit, per, burst, available };
      if (shared !== undefined)
        read.limiter.store = { name: shared.store, state: shared.state, degraded: shared.degraded };
    } else {
      const { kind, limit, inflight, queued, queue } = limiter.snapshot();
      read.limiter = { kind, limit, inflight, queued, queue };
    }
  }
  return read;
}

function health(
  breaker: BreakerState | 'none',
  breakRemaining: number,
  budgetUtilization: number | null,
  budgetExhausted: boolean,
): BreakerHealth {
  const degraded = (breaker !== 'none' && breaker !== 'closed') || budgetExhausted;
  return { status: degraded ? 'degraded' : 'ok', breaker, breakRemaining, budgetUtilization };
}

/** One key's reading: its `String(key)`, its guards, and whether it stands for the dependency. */
interface KeyReading {
  readonly key: string;
  readonly health: BreakerHealth;
  readonly dependency: boolean;
}

/** Every key of `scopes`, in order; a key listed by two scopes (two clients of one name) once, its worse reading kept. */
function readKeys(scopes: readonly ScopeReadable[]): KeyReading[] {
  const byKey = new Map<string, KeyReading>();
  for (const scope of scopes) {
    for (const reading of scope.entries(Infinity)) {
      const key = String(reading.key);
      const read: KeyReading = {
        key,
        health: readGuards(reading.policy),
        dependency: reading.policy.dependency !== undefined,
      };
      const seen = byKey.get(key);
      if (seen === undefined || (seen.health.status === 'ok' && read.health.status === 'degraded'))
        byKey.set(key, read);
    }
  }
  return [...byKey.values()];
}

// Worst last: the order of the `nresilience.breaker.state` gauge's values, `none` below them all.
const SEVERITY: readonly (BreakerState | 'none')[] = [
  'none',
  'closed',
  'recovering',
  'halfOpen',
  'open',
  'isolated',
];

/** `own` with the keys that stand for the dependency (hosts, services) folded in: the worst of each reading. */
function summarise(own: PolicyHealth, keys: readonly KeyReading[]): PolicyHealth {
  const entry: PolicyHealth = { ...own };
  for (const { health, dependency } of keys) {
    if (!dependency) continue;
    // A limiter is one instance's (the worst of several means nothing): while the name's calls run
    // through its hosts' or services' limiters, each key shows its own and the entry none.
    if (health.limiter !== undefined) delete entry.limiter;
    if (health.status === 'degraded') entry.status = 'degraded';
    if (
      entry.breaker === undefined ||
      SEVERITY.indexOf(health.breaker) > SEVERITY.indexOf(entry.breaker)
    )
      entry.breaker = health.breaker;
    entry.breakRemaining = Math.max(entry.breakRemaining ?? 0, health.breakRemaining);
    if (health.budgetUtilization !== null)
      entry.budgetUtilization = Math.max(entry.budgetUtilization ?? 0, health.budgetUtilization);
    else entry.budgetUtilization ??= null;
  }
  return entry;
}

function addKeys(entry: PolicyHealth, readings: readonly KeyReading[], maximumKeys: number): void {
  const degraded = readings.filter((reading) => reading.health.status === 'degraded');
  const listed = [
    ...degraded,
    ...readings.filter((reading) => reading.health.status !== 'degraded'),
  ].slice(0, maximumKeys);
  entry.keyCount = readings.length;
  entry.keysDegraded = degraded.length;
  const keys: Record<string, BreakerHealth> = {};
  for (const reading of listed) put(keys, reading.key, reading.health);
  entry.keys = keys;
  entry.keysNotShown = readings.length - listed.length;
}

/** A policy literally named `status` is listed as `policy:status` (terminus reserves `status`). */
function detailKey(name: string): string {
  return name === 'status' ? 'policy:status' : name;
}

/** Sets an own, enumerable property, `__proto__` included (plain assignment would set the prototype). */
function put<V>(record: Record<string, V>, key: string, value: V): void {
  Object.defineProperty(record, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
