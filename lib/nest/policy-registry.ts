import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { PinnedPolicies } from '../config/pinned-policies.js';
import { type ParsedResilienceConfig, type ResilienceConfig, parseResilienceConfig } from '../config/policy-config.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { type CircuitBreaker, type Policy, PolicyConfigError, type PolicyScope, type TokenBucket } from '../core/index.js';
import { PolicyHandle } from './policy-handle.js';
import { bindRegistry, unbindRegistry } from './registry-hook.js';
import { type PolicyInstrumentation, RESILIENCE_INSTRUMENTATION, instrumentationProblems } from './resilience-instrumentation.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.constants.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { UnknownPolicyError } from './unknown-policy.error.js';

const EXTRAS = ['isGlobal', 'exceptionFilter'];

/**
 * Owns one policy per registered name (a singleton per name) and the state pinned to the name: each
 * name gets its own retry-budget token bucket, created once and kept across reloads (a reload
 * reconfigures it, keeping its level). A `budget.shared` name gives one bucket to every policy of this
 * registry naming it (scoped to the registry, not process-wide). `false`/`'none'` means no budget.
 *
 * A name configured with `scope` also owns a `PolicyScope` (see {@link PolicyRegistry.scope}): keyed
 * policies (`handle.for(key)`) with their own breaker and budget bucket per key instead of the ones
 * pinned to the name. A reload keeps a name's scope, keyed state included, when that name's policy
 * config is unchanged; when it changed, the scope is rebuilt from the new config and every key starts
 * fresh (a full bucket, a closed breaker).
 *
 * `ResilienceModule` provides it and loads the module options in `onModuleInit` (so an invalid config
 * makes `app.init()` reject); inject it to read or reload policies:
 *
 * ```ts
 * constructor(private readonly registry: PolicyRegistry) {}
 * onConfigChange(json: ResilienceConfig) { this.registry.reload(json); }
 * ```
 */
@Injectable()
export class PolicyRegistry implements OnModuleInit, OnModuleDestroy {
  // Replaced once, when the module options are loaded (they carry the clock and random source).
  private policies = new PinnedPolicies();
  private readonly handles = new Map<string, PolicyHandle>();
  private readonly inUse = new Map<string, string[]>();
  private loaded = false;

  /**
   * @param options the module options (`policies`, `defaults`, `clock`, `random`, `telemetry`, `logging`); validated on init.
   * @param instrumentation telemetry and logging attached to every policy built (`ResilienceModule`
   *   provides it; `PolicyRegistry.create` attaches none)
   */
  constructor(
    @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options: ResilienceModuleOptions,
    @Optional() @Inject(RESILIENCE_INSTRUMENTATION) private readonly instrumentation?: PolicyInstrumentation,
  ) {}

  /**
   * Creates and loads a registry outside Nest (scripts, unit tests).
   * @throws ResilienceConfigError listing every problem of `options`.
   */
  static create(options: ResilienceModuleOptions): PolicyRegistry {
    const registry = new PolicyRegistry(options);
    registry.load();
    return registry;
  }

  /**
   * Validates the module options and builds every policy; then makes this registry the one
   * `@Resilient` methods use. Called by Nest.
   * @throws ResilienceConfigError listing every problem (full paths, values and rules).
   */
  onModuleInit(): void {
    if (!this.loaded) this.load();
    bindRegistry(this);
  }

  /** Stops `@Resilient` methods from using this registry (the application is closing). Called by Nest. */
  onModuleDestroy(): void {
    unbindRegistry(this);
  }

  /**
   * The current policy registered under `name`.
   * @throws UnknownPolicyError (listing the registered names) when `name` is not registered;
   *   Error when the registry has not been initialized yet.
   */
  get(name: string): Policy {
    const policy = this.policies.get(name);
    if (policy !== undefined) return policy;
    if (!this.loaded) {
      throw new Error(`PolicyRegistry is not initialized yet (policy "${name}"): ResilienceModule loads it on app.init()`);
    }
    throw new UnknownPolicyError([name], this.names());
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.policies.has(name);
  }

  /** The registered names, in config order. */
  names(): string[] {
    return this.policies.names();
  }

  /**
   * A stable handle for `name` (one per name) that always runs the current policy. The name is checked
   * when the handle runs (and at `app.init()` for names used by `@InjectPolicy`), not here.
   */
  handle(name: string): PolicyHandle {
    let handle = this.handles.get(name);
    if (handle === undefined) {
      handle = new PolicyHandle(this, name);
      this.handles.set(name, handle);
    }
    return handle;
  }

  /**
   * The retry-budget bucket `name` spends from (its pinned bucket, or the shared one), `undefined` when
   * its budget is off. Read `level`, `capacity` or `utilization` for health and tests.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  bucket(name: string): TokenBucket | undefined {
    return this.get(name).bucket();
  }

  /**
   * The circuit breaker pinned to `name` (it survives reloads and adopts new settings), `undefined`
   * when the policy has none.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  breaker(name: string): CircuitBreaker | undefined {
    return this.get(name).breaker();
  }

  /**
   * The `PolicyScope` of a name configured with `scope` (keyed policies, one per tenant, shard or
   * channel), `undefined` when the name is not scoped. Health checks read `scope.entries(limit)`.
   * Take it per use: a reload that changes the name's config replaces it.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  scope(name: string): PolicyScope<string | number> | undefined {
    this.get(name);
    return this.policies.scope(name);
  }

  /**
   * Replaces the policies with those of `config` (`{ policies, defaults }`). Everything is validated
   * first; on any problem nothing changes and the error lists every problem. Names used by
   * `@Resilient`/`@InjectPolicy` in the running application cannot be removed. Budget buckets stay
   * pinned to their names: a surviving name keeps its bucket and level under the new parameters.
   * The clock and random source stay those of the module options.
   * @throws ResilienceConfigError listing every problem (the old policies stay in force).
   */
  reload(config: ResilienceConfig): void {
    const parsed = this.validate(config, []);
    this.apply(parsed);
  }

  /**
   * Records that `usages` (name → where it is used) must stay registered, and checks them now.
   * Called by `ResilienceModule` at start-up.
   * @throws UnknownPolicyError naming every unregistered name and where it is used.
   */
  require(usages: ReadonlyMap<string, readonly string[]>): void {
    const missing = [...usages.keys()].filter((name) => !this.policies.has(name));
    if (missing.length > 0) throw new UnknownPolicyError(missing, this.names(), usages);
    for (const [name, where] of usages) this.inUse.set(name, [...(this.inUse.get(name) ?? []), ...where]);
  }

  private load(): void {
    const problems: PolicyConfigError[] = [];
    const options = this.options as unknown;
    if (options === null || typeof options !== 'object') {
      throw new ResilienceConfigError([new PolicyConfigError('options', options, 'must be an object { policies, defaults?, clock?, random? }')]);
    }
    const { clock, random, telemetry, logging, ...config } = options as ResilienceModuleOptions & Record<string, unknown>;
    problems.push(...instrumentationProblems(telemetry, logging));
    if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock?.setTimer !== 'function' || typeof clock?.clearTimer !== 'function')) {
      problems.push(new PolicyConfigError('clock', clock, 'must be a Clock (now, setTimer, clearTimer), e.g. new FakeClock()'));
    }
    if (random !== undefined && typeof random !== 'function') {
      problems.push(new PolicyConfigError('random', random, 'must be a function returning a number in [0, 1)'));
    }
    for (const key of EXTRAS) {
      if (key in config) {
        problems.push(new PolicyConfigError(key, config[key], `is a module definition option: give it to forRoot({ ${key} }) or beside useFactory in forRootAsync({ ${key}, useFactory })`));
        delete config[key];
      }
    }
    const parsed = this.validate(config as unknown as ResilienceConfig, problems);
    const instrumentation = this.instrumentation;
    this.policies = new PinnedPolicies({ clock, random, instrument: instrumentation && ((name, policy) => instrumentation.instrument(name, policy)) });
    this.apply(parsed);
  }

  private validate(config: ResilienceConfig, problems: PolicyConfigError[]): ParsedResilienceConfig {
    let parsed: ParsedResilienceConfig | undefined;
    try {
      parsed = parseResilienceConfig(config);
    } catch (error) {
      if (!(error instanceof ResilienceConfigError)) throw error;
      problems.push(...error.problems);
    }
    for (const [name, where] of this.inUse) {
      if (parsed !== undefined && !parsed.policies.has(name)) {
        problems.push(new PolicyConfigError(`policies.${name}`, undefined, `is required: it is used by ${where.join(', ')} in the running application`));
      }
    }
    if (problems.length > 0 || parsed === undefined) throw new ResilienceConfigError(problems);
    return parsed;
  }

  private apply(parsed: ParsedResilienceConfig): void {
    this.policies.apply(parsed);
    this.loaded = true;
  }
}
