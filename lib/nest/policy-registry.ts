import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import type { ResolvedPolicyConfig } from '../config/describe-policy.js';
import { PinnedPolicies } from '../config/pinned-policies.js';
import {
  type ParsedResilienceConfig,
  type ResilienceConfig,
  parseResilienceConfig,
} from '../config/policy-config.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import {
  type CircuitBreaker,
  Classifier,
  Drain,
  type KeyedFamily,
  type Policy,
  PolicyConfigError,
  type PolicyExplanation,
  type PolicyScope,
  SystemClock,
  type RetryBudgetState,
  explainPolicy,
} from '../core/index.js';
import {
  CLOCK_RULE,
  isPlainObject,
  NAME_RULE,
  optionProblems,
  RANDOM_RULE,
} from '../core/internal.js';
import { PolicyHandle } from './policy-handle.js';
import { httpExceptionRule } from './http-exception.rule.js';
import type { ReloadCounts, ReloadEvent, ReloadListener, ReloadTrigger } from './reload-event.js';
import { type ReloadTarget, ReloadTriggers, reloadSettingsProblems } from './reload-triggers.js';
import {
  type PolicyInstrumentation,
  RESILIENCE_INSTRUMENTATION,
  instrumentationProblems,
} from './resilience-instrumentation.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.constants.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { UnknownPolicyError } from './unknown-policy.error.js';
import { ShutdownGrace, shutdownOptionProblems } from './shutdown-grace.js';

const EXTRAS = ['isGlobal', 'exceptionFilter'];

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
  private readonly families = new Map<string, WeakRef<KeyedFamily>[]>();
  private readonly inUse = new Map<string, string[]>();
  private loaded = false;
  private triggers: ReloadTriggers | undefined;
  private readonly listeners = new Set<ReloadListener>();
  private counts: ReloadCounts = { reloaded: 0, reloadFailed: 0 };
  private reloadLogger: Logger | undefined;
  private readonly drain = new Drain();
  private readonly target: ReloadTarget = {
    validate: (document) => this.validate(document as ResilienceConfig, []),
    apply: (trigger, parsed) => this.applyReload(trigger, parsed),
    refuse: (trigger, error) => this.report(trigger, error),
  };

  /**
   * @param options the module options (`policies`, `defaults`, `clock`, `random`, `telemetry`, `logging`); validated on init.
   * @param instrumentation telemetry and logging attached to every policy built (`ResilienceModule`
   *   provides it; `PolicyRegistry.create` attaches none)
   * @param grace the module's shutdown grace (`ResilienceModule` provides it; the registry drains after it)
   */
  constructor(
    @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options: ResilienceModuleOptions,
    @Optional()
    @Inject(RESILIENCE_INSTRUMENTATION)
    private readonly instrumentation?: PolicyInstrumentation,
    @Optional() private readonly grace?: ShutdownGrace,
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
    const grace = this.grace?.wait(signal);
    if (grace === undefined) this.drain.start();
    else return grace.then(() => this.drain.start());
  }

  /** Whether the registry is draining (the application is shutting down, its grace over). */
  get draining(): boolean {
    return this.drain.draining;
  }

  /**
   * Whether the application has begun shutting down: from its first shutdown hook (before any
   * grace), or once draining. The health indicator's `downWhenShuttingDown` reads it.
   */
  get shuttingDown(): boolean {
    return this.grace?.shuttingDown === true || this.drain.draining;
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
    const refs = this.liveFamilies(name);
    if (!refs.some((ref) => ref.deref() === family)) refs.push(new WeakRef(family));
    this.families.set(name, refs);
  }

  /**
   * The keyed families built from `name` that are still in use (see {@link PolicyRegistry.trackKeys}):
   * their keys stand for the name's dependency (hosts, services), so the health indicator
   * summarises them in the name's entry. Empty when none; never throws.
   */
  keyedFamilies(name: string): KeyedFamily[] {
    const families: KeyedFamily[] = [];
    for (const ref of this.liveFamilies(name)) {
      const family = ref.deref();
      if (family !== undefined) families.push(family);
    }
    return families;
  }

  /** The weak references of `name` whose family is still alive (dead ones are dropped). */
  private liveFamilies(name: string): WeakRef<KeyedFamily>[] {
    const refs = (this.families.get(name) ?? []).filter((ref) => ref.deref() !== undefined);
    if (refs.length === 0) this.families.delete(name);
    else this.families.set(name, refs);
    return refs;
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
      parsed = this.validate(config, []);
    } catch (error) {
      this.report('api', error as Error);
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
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Reloads applied and refused since start-up. */
  get reloadCounts(): ReloadCounts {
    return this.counts;
  }

  /**
   * Records that `usages` (name → where it is used) must stay registered, and checks them now.
   * Called by `ResilienceModule` at start-up.
   * @throws UnknownPolicyError naming every unregistered name and where it is used.
   */
  require(usages: ReadonlyMap<string, readonly string[]>): void {
    const missing = [...usages.keys()].filter((name) => !this.policies.has(name));
    if (missing.length > 0) throw new UnknownPolicyError(missing, this.names(), usages);
    for (const [name, where] of usages)
      this.inUse.set(name, [...(this.inUse.get(name) ?? []), ...where]);
  }

  private load(): void {
    const problems: PolicyConfigError[] = [];
    const options = this.options as unknown;
    if (options === null || typeof options !== 'object') {
      throw new ResilienceConfigError([
        new PolicyConfigError(
          'options',
          options,
          'must be an object { policies, defaults?, clock?, random? }',
        ),
      ]);
    }
    const {
      clock,
      random,
      telemetry,
      logging,
      configFile,
      watch,
      configSource,
      reloadOnSignal,
      classifiers,
      shutdown,
      ...config
    } = options as ResilienceModuleOptions & Record<string, unknown>;
    const codeClassifiers = classifierProblems(classifiers, problems);
    problems.push(...shutdownOptionProblems(shutdown));
    problems.push(...instrumentationProblems(telemetry, logging));
    problems.push(
      ...reloadSettingsProblems({ configFile, watch, configSource, reloadOnSignal }, config),
    );
    problems.push(
      ...optionProblems(
        { clock, random },
        { clock: CLOCK_RULE, random: RANDOM_RULE },
        '',
        'option',
      ),
    );
    for (const key of EXTRAS) {
      if (key in config) {
        problems.push(
          new PolicyConfigError(
            key,
            config[key],
            `is a module definition option: give it to forRoot({ ${key} }) or beside useFactory in forRootAsync({ ${key}, useFactory })`,
          ),
        );
        delete config[key];
      }
    }
    let parsed: ParsedResilienceConfig;
    if (configFile === undefined && configSource === undefined)
      parsed = this.validate(config as unknown as ResilienceConfig, problems);
    else {
      if (problems.length > 0) throw new ResilienceConfigError(problems);
      this.triggers = new ReloadTriggers(
        { configFile, watch, configSource, reloadOnSignal, clock: clock ?? SystemClock.instance },
        this.target,
      );
      parsed = this.triggers.open();
    }
    const instrumentation = this.instrumentation;
    for (const name of codeClassifiers.keys()) {
      if (!parsed.policies.has(name))
        throw new ResilienceConfigError([
          new PolicyConfigError(
            `classifiers.${name}`,
            '[Classifier]',
            `must name a configured policy (${[...parsed.policies.keys()].join(', ') || 'none configured'})`,
          ),
        ]);
    }
    this.policies = new PinnedPolicies({
      clock,
      random,
      drain: this.drain,
      instrument: instrumentation && ((name, policy) => instrumentation.instrument(name, policy)),
      classifiers: codeClassifiers,
      defaultRules: [httpExceptionRule],
    });
    this.apply(parsed);
  }

  private validate(
    config: ResilienceConfig,
    problems: PolicyConfigError[],
  ): ParsedResilienceConfig {
    let parsed: ParsedResilienceConfig | undefined;
    try {
      parsed = parseResilienceConfig(config);
    } catch (error) {
      if (!(error instanceof ResilienceConfigError)) throw error;
      problems.push(...error.problems);
    }
    for (const [name, where] of this.inUse) {
      if (parsed !== undefined && !parsed.policies.has(name)) {
        problems.push(
          new PolicyConfigError(
            `policies.${name}`,
            undefined,
            `is required: it is used by ${where.join(', ')} in the running application`,
          ),
        );
      }
    }
    if (problems.length > 0 || parsed === undefined) throw new ResilienceConfigError(problems);
    return parsed;
  }

  private apply(parsed: ParsedResilienceConfig): void {
    this.policies.apply(parsed);
    this.loaded = true;
  }

  private applyReload(trigger: ReloadTrigger, parsed: ParsedResilienceConfig): void {
    this.apply(parsed);
    this.counts = { ...this.counts, reloaded: this.counts.reloaded + 1 };
    this.logger?.log(`config reloaded (${trigger}): ${this.names().join(', ')}`);
    this.emit({ kind: 'reloaded', trigger, error: undefined, names: this.names() });
  }

  /** A refused reload: counted, logged once at warn, reported; nothing else changes. */
  private report(trigger: ReloadTrigger, error: Error): void {
    this.counts = { ...this.counts, reloadFailed: this.counts.reloadFailed + 1 };
    this.logger?.warn(
      `config reload (${trigger}) refused, the previous config stays in force: ${error.message}`,
    );
    this.emit({ kind: 'reloadFailed', trigger, error, names: this.names() });
  }

  private emit(event: ReloadEvent): void {
    this.instrumentation?.recordReload(event.kind);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener must not decide whether a reload happened.
      }
    }
  }

  /** Reload log lines go where the policies' own logs go (nowhere when logging is off or not attached). */
  private get logger(): Logger | undefined {
    return this.instrumentation?.logging === undefined
      ? undefined
      : (this.reloadLogger ??= new Logger('NResilience.config'));
  }
}

/** Reads the `classifiers` module option: a map of policy names to `Classifier`s; problems are pushed. */
function classifierProblems(
  classifiers: unknown,
  problems: PolicyConfigError[],
): ReadonlyMap<string, Classifier> {
  const found = new Map<string, Classifier>();
  if (classifiers === undefined) return found;
  if (!isPlainObject(classifiers)) {
    problems.push(
      new PolicyConfigError(
        'classifiers',
        classifiers,
        'must be a plain object of policy names to Classifiers, e.g. { payments: Classifier.http.with(rule) }',
      ),
    );
    return found;
  }
  for (const [name, classifier] of Object.entries(classifiers)) {
    if (!NAME_RULE.accepts(name))
      problems.push(
        new PolicyConfigError(`classifiers.${name}`, name, `a policy name ${NAME_RULE.rule}`),
      );
    else if (classifier instanceof Classifier) found.set(name, classifier);
    else
      problems.push(
        new PolicyConfigError(
          `classifiers.${name}`,
          classifier,
          'must be a Classifier (Classifier.of(...rules), Classifier.http.with(...))',
        ),
      );
  }
  return found;
}
