import { DURATION_FORMAT, durationMs } from '../config/config-reading.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { type ParsedResilienceConfig, parseResilienceConfig } from '../config/policy-config.js';
import { Classifier, type Clock, PolicyConfigError } from '../core/index.js';
import {
  BOOLEAN_RULE,
  CLOCK_RULE,
  checkOptions,
  DELAY_RULE,
  isPlainObject,
  NAME_RULE,
  optionProblems,
  RANDOM_RULE,
} from '../core/internal.js';
import { type ResolvedLogging, readLogging, telemetryProblems } from './instrumentation-options.js';
import { type ModuleRedisOption, redisOptionProblems } from './module-rate-store.js';
import { type ReloadSettings, reloadSettingsProblems } from './reload-triggers.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';

/**
 * The module options as the module uses them: read once, by {@link readModuleOptions}, every field
 * checked and resolved (defaults filled in, durations in ms), the object frozen. Everything the
 * module builds (registry, instrumentation, shutdown grace, filters) reads these, never the raw
 * options. @internal
 */
export interface ModuleSettings {
  /** The clock of every policy, budget, breaker, reload debounce and grace; `undefined`: the system clock. */
  readonly clock: Clock | undefined;
  /** The jitter source; `undefined`: `Math.random`. */
  readonly random: (() => number) | undefined;
  /** Classifiers written in code, by policy name (checked against the config once it is read). */
  readonly classifiers: ReadonlyMap<string, Classifier>;
  /** OpenTelemetry: `false` (off), or the providers to use (`undefined`: the global ones). */
  readonly telemetry: false | TelemetrySettings;
  /** The logging profile and sampling; `undefined` for `'off'`. */
  readonly logging: ResolvedLogging;
  /** The shutdown grace in ms; `undefined` without `shutdown`. */
  readonly shutdownGrace: number | undefined;
  /** Where the config comes from when not inline (`configFile` or `configSource`) and what reloads it. */
  readonly source: Omit<ReloadSettings, 'clock'> | undefined;
  /** The inline `{ policies, defaults }`, parsed; `undefined` when the config comes from `source`. */
  readonly inline: ParsedResilienceConfig | undefined;
  /** The Redis of `limit.rate.shared: true` (checked, copied); `undefined` without one. */
  readonly redis: ModuleRedisOption | undefined;
}

/** The `telemetry` module option resolved (it is on). @internal */
export interface TelemetrySettings {
  /** The option as given, `undefined` when left out (then a missing `@opentelemetry/api` is no surprise). */
  readonly option: unknown;
  readonly meterProvider: object | undefined;
  readonly tracerProvider: object | undefined;
  /** Whether spans are recorded (default `true`). */
  readonly traces: boolean;
}

/** Keys of the module definition, given beside the options rather than inside them. */
const EXTRAS = ['isGlobal', 'exceptionFilter'];

/**
 * Reads the module options (what `forRoot` got or `forRootAsync`'s factory returned): every field
 * checked, the inline config parsed, every problem collected. @internal
 * @returns the checked settings, frozen
 * @throws ResilienceConfigError listing every problem, each with its path (`telemetry.meterProvider`,
 *   `policies.payments.attempts`), value and rule
 */
export function readModuleOptions(options: unknown): ModuleSettings {
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
    redis,
    ...config
    // One snapshot: each option is read once, whatever the object behind it does on a read.
  } = { ...options } as ResilienceModuleOptions & Record<string, unknown>;
  const problems: PolicyConfigError[] = [];
  const codeClassifiers = readClassifiers(classifiers, problems);
  const grace = readShutdownGrace(shutdown);
  problems.push(...grace.problems);
  problems.push(...telemetryProblems(telemetry));
  problems.push(...redisOptionProblems(redis));
  const loggingRead = readLogging(logging);
  if ('problems' in loggingRead) problems.push(...loggingRead.problems);
  problems.push(
    ...reloadSettingsProblems({ configFile, watch, configSource, reloadOnSignal }, config),
  );
  problems.push(
    ...optionProblems({ clock, random }, { clock: CLOCK_RULE, random: RANDOM_RULE }, '', 'option'),
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
  const fromSource = configFile !== undefined || configSource !== undefined;
  let inline: ParsedResilienceConfig | undefined;
  if (!fromSource) {
    try {
      inline = parseResilienceConfig(config);
    } catch (error) {
      if (!(error instanceof ResilienceConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ResilienceConfigError(problems);
  return Object.freeze({
    clock,
    random,
    classifiers: codeClassifiers,
    telemetry: telemetrySettings(telemetry),
    logging: 'logging' in loggingRead ? loggingRead.logging : undefined,
    shutdownGrace: grace.ms,
    source: fromSource
      ? Object.freeze({ configFile, watch, configSource, reloadOnSignal })
      : undefined,
    inline,
    redis: redis === undefined ? undefined : Object.freeze({ ...redis }),
  });
}

/**
 * The module options read once, or why they were refused: what `ResilienceModule` provides under
 * {@link RESILIENCE_SETTINGS}. Providers made before `app.init()` (instrumentation, filters) read
 * {@link ModuleOptionsReading.valid}, which is `undefined` for refused options (the application
 * does not start: the registry throws {@link ModuleOptionsReading.settings}'s error in its init).
 * @internal
 */
export class ModuleOptionsReading {
  private constructor(
    /** The checked settings, `undefined` when the options were refused. */
    readonly valid: ModuleSettings | undefined,
    /** Why the options were refused (every problem), `undefined` when they were not. */
    readonly error: ResilienceConfigError | undefined,
  ) {}

  /** Reads `options` once (see {@link readModuleOptions}); never throws a config error. */
  static of(options: unknown): ModuleOptionsReading {
    try {
      return new ModuleOptionsReading(readModuleOptions(options), undefined);
    } catch (error) {
      if (!(error instanceof ResilienceConfigError)) throw error;
      return new ModuleOptionsReading(undefined, error);
    }
  }

  /**
   * The checked settings.
   * @throws ResilienceConfigError listing every problem of the options
   */
  get settings(): ModuleSettings {
    if (this.valid === undefined) throw this.error!;
    return this.valid;
  }
}

/** Injection token of the module's {@link ModuleOptionsReading}. @internal */
export const RESILIENCE_SETTINGS = 'RESILIENCE_SETTINGS';

/**
 * Checks that every code classifier names a policy of `config` (read at start-up from inline
 * options, a file or a source).
 * @throws ResilienceConfigError naming the first `classifiers.<name>` that names none
 */
export function checkClassifierNames(
  classifiers: ReadonlyMap<string, Classifier>,
  config: ParsedResilienceConfig,
): void {
  for (const name of classifiers.keys()) {
    if (!config.policies.has(name))
      throw new ResilienceConfigError([
        new PolicyConfigError(
          `classifiers.${name}`,
          '[Classifier]',
          `must name a configured policy (${[...config.policies.keys()].join(', ') || 'none configured'})`,
        ),
      ]);
  }
}

/**
 * Reads `exceptionFilter`, given beside the options (it decides which providers exist, so it is read
 * when `forRoot` runs).
 * @returns `undefined` for none, else whether the bad-gateway filter is asked for
 * @throws PolicyConfigError naming `exceptionFilter`, the value and the rule for anything but a
 *   boolean or `{ badGateway?: boolean }`
 */
export function readExceptionFilter(value: unknown): { badGateway: boolean } | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { badGateway: false };
  if (!isPlainObject(value))
    throw new PolicyConfigError(
      'exceptionFilter',
      value,
      'must be true, false or { badGateway?: boolean }',
    );
  const options = checkOptions(
    value,
    { badGateway: BOOLEAN_RULE },
    'exceptionFilter',
    'exceptionFilter option',
  );
  return { badGateway: options.badGateway === true };
}

/** The `telemetry` option of valid options resolved. */
function telemetrySettings(telemetry: unknown): false | TelemetrySettings {
  if (telemetry === false) return false;
  const chosen = (typeof telemetry === 'object' ? telemetry : {}) as {
    meterProvider?: object;
    tracerProvider?: object;
    traces?: boolean;
  };
  return Object.freeze({
    option: telemetry,
    meterProvider: chosen.meterProvider,
    tracerProvider: chosen.tracerProvider,
    traces: chosen.traces !== false,
  });
}

/** Reads the `classifiers` module option: a map of policy names to `Classifier`s; problems are pushed. */
function readClassifiers(
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

/** Reads the `shutdown` module option: `{ grace }`, the grace in ms (none when it is left out). */
function readShutdownGrace(value: unknown): {
  ms: number | undefined;
  problems: PolicyConfigError[];
} {
  if (value === undefined) return { ms: undefined, problems: [] };
  if (!isPlainObject(value))
    return {
      ms: undefined,
      problems: [
        new PolicyConfigError('shutdown', value, "must be { grace } (e.g. { grace: '5s' })"),
      ],
    };
  const problems: PolicyConfigError[] = [];
  for (const key of Object.keys(value))
    if (key !== 'grace')
      problems.push(
        new PolicyConfigError(
          `shutdown.${key}`,
          value[key],
          'is not a known shutdown option (grace)',
        ),
      );
  const grace = durationMs(value.grace);
  if (grace === undefined || !DELAY_RULE.accepts(grace))
    problems.push(
      new PolicyConfigError(
        'shutdown.grace',
        value.grace,
        `${DELAY_RULE.rule}, ${DURATION_FORMAT}`,
      ),
    );
  return { ms: grace, problems };
}
