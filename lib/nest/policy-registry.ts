import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import type { ResolvedPolicyConfig } from '../config/describe-policy.js';
import { PinnedPolicies } from '../config/pinned-policies.js';
import { type ModuleRateStore, RESILIENCE_RATE_STORE } from './module-rate-store.js';
import {
  type ParsedResilienceConfig,
  type ResilienceConfig,
  parseResilienceConfig,
} from '../config/policy-config.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import {
  type CircuitBreaker,
  type KeyedFamily,
  type Policy,
  type PolicyExplanation,
  type PolicyScope,
  SystemClock,
  type RetryBudgetState,
  explainPolicy,
} from '../core/index.js';
import { PolicyHandle } from './policy-handle.js';
import { httpExceptionRule } from './http-exception.rule.js';
import { KeyedFamilies } from './keyed-families.js';
import {
  ModuleOptionsReading,
  RESILIENCE_SETTINGS,
  checkClassifierNames,
} from './module-settings.js';
import { PolicyUsages } from './policy-usages.js';
import { RegistryShutdown } from './registry-shutdown.js';
import type { ReloadCounts, ReloadListener, ReloadTrigger } from './reload-event.js';
import { ReloadReporter } from './reload-reporter.js';
import { type ReloadTarget, ReloadTriggers } from './reload-triggers.js';
import {
  type PolicyInstrumentation,
  RESILIENCE_INSTRUMENTATION,
} from './resilience-instrumentation.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { UnknownPolicyError } from './unknown-policy.error.js';
import { ShutdownGrace } from './shutdown-grace.js';

/**
 * Owns one policy per registered name (a singleton per name) and the state pinned to the name: each
 * name gets its own retry-budget token bucket, created once and kept across reloads (a reload
 * reconfigures it, keeping its level). A `budget.shared` name gives one bucket to every policy of this
 * registry naming it (scoped to the registry, not process-wide). `false`/`'none'` means no budget.
 *
 * A name configured with `scope` also owns a `PolicyScope` (see {@link PolicyRegistry.scope}): keyed
 * policies (`handle.for(key)`) with their own breaker and budget bucket per key instead of the ones
 * pinned to the name. Keyed state survives reloads like the name's own: a reload that leaves a name's
 * config unchanged keeps every keyed instance as it is (its scope's keys, and the per-host and
 * per-service state of clients built from `handle(name)`); one that changes it keeps each key's
 * breaker and bucket, which adopt the new settings as the name's pinned ones do (changing
 * `scope.maximumKeys` starts the scope's keys fresh).
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
export class PolicyRegistry implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  // Replaced once, when the module options are loaded (they carry the clock and random source).
  private policies = new PinnedPolicies();
  private readonly handles = new Map<string, PolicyHandle>();
  private readonly families = new KeyedFamilies();
  private readonly usages = new PolicyUsages();
  private readonly reports: ReloadReporter;
  private readonly shutdown: RegistryShutdown;
  private loaded = false;
  private triggers: ReloadTriggers | undefined;
  private readonly target: ReloadTarget = {
    validate: (document) => this.validate(document as ResilienceConfig),
    apply: (trigger, parsed) => this.applyReload(trigger, parsed),
    refuse: (trigger, error) => this.reports.refused(trigger, error, this.names()),
  };

  /**
   * Created by Nest (`ResilienceModule` provides it); outside Nest use {@link PolicyRegistry.create}.
   * @param options the module options as read once (`ResilienceModule` reads them); a refused
   *   reading makes the registry's init throw its `ResilienceConfigError`.
   * @param instrumentation telemetry and logging attached to every policy built (`ResilienceModule`
   *   provides it; `PolicyRegistry.create` attaches none)
   * @param grace the module's shutdown grace (`ResilienceModule` provides it; the registry drains after it)
   * @param rateStore the store of `limit.rate.shared: true` made from the `redis` option
   *   (`ResilienceModule` provides it)
   * @internal
   */
  constructor(
    @Inject(RESILIENCE_SETTINGS) private readonly options: ModuleOptionsReading,
    @Optional()
    @Inject(RESILIENCE_INSTRUMENTATION)
    private readonly instrumentation?: PolicyInstrumentation,
    @Optional() grace?: ShutdownGrace,
    @Optional()
    @Inject(RESILIENCE_RATE_STORE)
    private readonly rateStore?: ModuleRateStore,
  ) {
    this.reports = new ReloadReporter(instrumentation);
    this.shutdown = new RegistryShutdown(grace);
  }

  /**
   * Creates and loads a registry outside Nest (scripts, unit tests).
   * @param options `ResilienceModuleOptions` (`policies`, `defaults`, `clock`, `random`, ...)
   * @throws ResilienceConfigError listing every problem of `options`.
   */
  static create(options: ResilienceModuleOptions): PolicyRegistry {
    const registry = new PolicyRegistry(ModuleOptionsReading.of(options));
    registry.load();
    return registry;
  }

  /**
   * Validates the module options and builds every policy. Called by Nest.
   * @throws ResilienceConfigError listing every problem (full paths, values and rules).
   */
  onModuleInit(): void {
    if (!this.loaded) this.load();
  }

  /**
   * Stops every reload trigger (file watch, config source subscription, signal listener): the
   * application is closing. The policies stay: `@Resilient` methods keep working while it closes
   * (requests the server already accepted are answered). Called by Nest; call it yourself for a
   * registry made with {@link PolicyRegistry.create}.
   */
  onModuleDestroy(): void {
    this.triggers?.close();
  }

  /**
   * Drains (DESIGN §4 "Shutdown"): from now on calls stop retrying — a call waiting in backoff or
   * in a guarded pause after a failure settles at once with that failure (stop reason `draining`,
   * a `draining` event), a new call still makes its first attempt — so `app.close()` is not held by
   * retries, and requests the server already accepted are answered. With the module's
   * `shutdown: { grace }` and a SIGTERM it drains once the grace has passed (the server answers as
   * usual, retries included, until then). Called by Nest before the server closes.
   * @param signal the signal closing the application, as Nest passes it
   */
  beforeApplicationShutdown(signal?: string): Promise<void> | void {
    this.triggers?.close();
    return this.shutdown.begin(signal);
  }

  /** Whether the registry is draining (the application is shutting down, its grace over). */
  get draining(): boolean {
    return this.shutdown.draining;
  }

  /**
   * Whether the application has begun shutting down: from its first shutdown hook (before any
   * grace), or once draining. The health indicator's `downWhenShuttingDown` reads it.
   */
  get shuttingDown(): boolean {
    return this.shutdown.shuttingDown;
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
      throw new Error(
        `PolicyRegistry is not initialized yet (policy "${name}"): ResilienceModule loads it on app.init()`,
      );
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
  bucket(name: string): RetryBudgetState | undefined {
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
   * What `name` resolved to after its preset, `extends`, `defaults` and its own settings, every value
   * filled in (durations in ms, `false`/`null` for what is off): plain JSON to log or serve.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  describe(name: string): ResolvedPolicyConfig {
    this.get(name);
    return this.policies.describe(name)!;
  }

  /**
   * The configuration of `name` beside its live readings (`Policy.explain`), and for a name with a
   * `scope` one summary line per key (its breaker state and budget spent, the first 20 keys).
   * `toString()` prints it. For a live app, log it or put it behind a route of your own: the
   * library opens no endpoint for it.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  explain(name: string): PolicyExplanation {
    const policy = this.get(name);
    const entries = this.policies.scope(name)?.entries(20) ?? [];
    const keys = entries.map(
      (e) =>
        `${String(e.key)}: breaker ${e.breaker?.state ?? 'none'}, budget ${e.budgetUtilization === undefined ? 'none' : `${Math.round(e.budgetUtilization * 100)} % spent`}`,
    );
    return explainPolicy(policy, keys);
  }

  /**
   * The `PolicyScope` of a name configured with `scope` (keyed policies, one per tenant, shard or
   * channel), `undefined` when the name is not scoped. Health checks read `scope.entries(limit)`.
   * Take it per use: a reload that changes `scope.maximumKeys` (or removes the scope) replaces it.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  scope(name: string): PolicyScope<string | number> | undefined {
    this.get(name);
    return this.policies.scope(name);
  }

  /**
   * The policy of `name` with its retry budget and breaker resolved per instance instead of pinned to
   * the name (a `budget.shared` bucket stays shared): what per-key state outside a configured scope
   * starts from, e.g. the resilient fetch's per-host breakers. The same object until a reload changes
   * the name's config.
   * @throws UnknownPolicyError when `name` is not registered.
   */
  keyedTemplate(name: string): Policy {
    this.get(name);
    return this.policies.keyedTemplate(name)!;
  }

  /**
   * Records `family`, a keyed family built from `name` (the hosts of a resilient fetch or of the
   * `HttpService` adapter, the services of a gRPC interceptor, given `handle(name)`), so that
   * {@link PolicyRegistry.keyedFamilies} (and the health indicator) reads its keys under the name.
   * Held weakly: a client that is dropped stops being reported.
   */
  trackKeys(name: string, family: KeyedFamily): void {
    this.families.track(name, family);
  }

  /**
   * The keyed families built from `name` that are still in use (see {@link PolicyRegistry.trackKeys}):
   * their keys stand for the name's dependency (hosts, services), so the health indicator
   * summarises them in the name's entry. Empty when none; never throws.
   */
  keyedFamilies(name: string): KeyedFamily[] {
    return this.families.of(name);
  }

  /**
   * Replaces the policies with those of `config` (`{ policies, defaults }`). Everything is validated
   * first; on any problem nothing changes and the error lists every problem. Names used by
   * `@Resilient`/`@InjectPolicy` in the running application cannot be removed. The state pinned to a
   * surviving name is kept: its retry-budget bucket (level kept under the new parameters), its
   * circuit breaker (state, served break and baselines kept; new thresholds adopted without closing),
   * its keyed state (scope keys, per-host and per-service state: kept as it is when its config is
   * unchanged, reconfigured keeping its state when it changed), and its logging state. Calls already running finish under
   * the policy they started with (their outcomes land in the same pinned state); calls started after
   * the reload use the new config. The clock and random source stay those of the module options.
   * Reports a {@link ReloadEvent} (`reloaded`, or `reloadFailed` before throwing) with trigger `api`.
   * @throws ResilienceConfigError listing every problem (the old policies stay in force).
   */
  reload(config: ResilienceConfig): void {
    let parsed: ParsedResilienceConfig;
    try {
      parsed = this.validate(config);
    } catch (error) {
      this.reports.refused('api', error as Error, this.names());
      throw error;
    }
    this.applyReload('api', parsed);
  }

  /**
   * Reads the config source again — the `configFile` (even when its content did not change) or the
   * `configSource` — and reloads from it, as `SIGHUP` does with `reloadOnSignal: 'SIGHUP'`. Call it
   * after your application changed its own config. The outcome is reported as a {@link ReloadEvent}
   * (trigger `refresh`), never thrown: a refused config leaves the old one in force.
   * @returns when the outcome has been reported.
   * @throws Error (as a rejection) when the module options name no `configFile` or `configSource`.
   */
  async refresh(): Promise<void> {
    if (this.triggers === undefined) {
      throw new Error(
        'PolicyRegistry.refresh(): nothing to read again; give ResilienceModule a configFile or a configSource (or call reload(config))',
      );
    }
    await this.triggers.refresh('refresh');
  }

  /**
   * Calls `listener` with every {@link ReloadEvent} (applied or refused, whatever the trigger) from
   * now on. Reloads are also logged (context `NResilience.config`: applied at `log`, refused once at
   * `warn`) and counted ({@link PolicyRegistry.reloadCounts}, and the OpenTelemetry counter
   * `nresilience.config.reloads` by outcome).
   * @returns a function that removes the listener.
   */
  onReload(listener: ReloadListener): () => void {
    return this.reports.add(listener);
  }

  /** Reloads applied and refused since start-up. */
  get reloadCounts(): ReloadCounts {
    return this.reports.reloadCounts;
  }

  /**
   * Records that `usages` (name → where it is used) must stay registered, and checks them now.
   * Called by `ResilienceModule` at start-up.
   * @throws UnknownPolicyError naming every unregistered name and where it is used.
   */
  require(usages: ReadonlyMap<string, readonly string[]>): void {
    this.usages.require(
      usages,
      (name) => this.policies.has(name),
      () => this.names(),
    );
  }

  /** Builds every policy from the module options (read once), opening the config file or source. */
  private load(): void {
    const settings = this.options.settings;
    let parsed: ParsedResilienceConfig;
    if (settings.source === undefined) parsed = settings.inline!;
    else {
      this.triggers = new ReloadTriggers(
        { ...settings.source, clock: settings.clock ?? SystemClock.instance },
        this.target,
      );
      parsed = this.triggers.open();
    }
    checkClassifierNames(settings.classifiers, parsed);
    const instrumentation = this.instrumentation;
    this.policies = new PinnedPolicies({
      clock: settings.clock,
      random: settings.random,
      drain: this.shutdown.drain,
      instrument: instrumentation && ((name, policy) => instrumentation.instrument(name, policy)),
      classifiers: settings.classifiers,
      defaultRules: [httpExceptionRule],
      rateStore: this.rateStore?.store,
    });
    this.apply(parsed);
  }

  /** Parses a config document and checks it against the running application's usages. */
  private validate(config: ResilienceConfig): ParsedResilienceConfig {
    const parsed = parseResilienceConfig(config);
    const problems = this.usages.problems(parsed);
    if (problems.length > 0) throw new ResilienceConfigError(problems);
    return parsed;
  }

  private apply(parsed: ParsedResilienceConfig): void {
    this.policies.apply(parsed);
    this.loaded = true;
  }

  private applyReload(trigger: ReloadTrigger, parsed: ParsedResilienceConfig): void {
    this.apply(parsed);
    this.reports.applied(trigger, this.names());
  }
}
