import { ConfigFileSource } from '../config/config-file-source.js';
import type { ParsedResilienceConfig } from '../config/policy-config.js';
import { type Clock, PolicyConfigError } from '../core/index.js';
import { DELAY_RULE, isPlainObject, optionProblems, sectionRule } from '../core/internal.js';
import type { ReloadTrigger } from './reload-event.js';
import type { ResilienceConfigSource } from './resilience-config-source.js';

/** The module options that decide where the config comes from and what reloads it. */
export interface ReloadSettings {
  readonly configFile?: string;
  readonly watch?: boolean | { readonly debounce?: number };
  readonly configSource?: ResilienceConfigSource;
  readonly reloadOnSignal?: 'SIGHUP';
  readonly clock: Clock;
}

/** What the triggers reload: the registry. */
export interface ReloadTarget {
  /** Parses a config document and checks it against the running application. @throws ResilienceConfigError */
  validate(document: unknown): ParsedResilienceConfig;
  /** Puts a validated config in force and reports `reloaded`. */
  apply(trigger: ReloadTrigger, parsed: ParsedResilienceConfig): void;
  /** Reports `reloadFailed`; the old config stays. */
  refuse(trigger: ReloadTrigger, error: Error): void;
}

/**
 * The sources of a registry's config other than inline options, and what makes it read them again: a
 * config file (watched when `watch` is set), a `configSource` (its `changes` emissions), `SIGHUP`
 * when `reloadOnSignal` is set, and `registry.refresh()`. Every trigger ends in exactly one
 * `apply` or `refuse` on the target (except a blank file, which waits for its content).
 */
export class ReloadTriggers {
  private file: ConfigFileSource<ParsedResilienceConfig> | undefined;
  private subscription: { unsubscribe(): void } | undefined;
  private queued = false;
  private readonly onSignal = (): void => void this.refresh('signal');

  constructor(
    private readonly settings: ReloadSettings,
    private readonly target: ReloadTarget,
  ) {}

  /** Whether there is anything to read again (a file or a config source). */
  get reloadable(): boolean {
    return this.settings.configFile !== undefined || this.settings.configSource !== undefined;
  }

  /**
   * Reads the start-up config from the file or the source, then starts watching (file, source
   * changes, signal).
   * @throws ConfigFileError for a file that is missing, blank, unparsable or invalid;
   *   ResilienceConfigError for an invalid source config; whatever `configSource.read()` throws.
   */
  open(): ParsedResilienceConfig {
    const { configFile, configSource, watch, clock } = this.settings;
    let parsed: ParsedResilienceConfig;
    if (configFile !== undefined) {
      this.file = new ConfigFileSource({
        path: configFile,
        clock,
        watch: watch !== undefined && watch !== false,
        debounce: typeof watch === 'object' ? watch.debounce : undefined,
        validate: (document) => this.target.validate(document),
        onConfig: (next) => this.target.apply(this.fileTrigger ?? 'file', next),
        onError: (error) => this.target.refuse(this.fileTrigger ?? 'file', error),
      });
      parsed = this.file.open();
    } else {
      parsed = this.target.validate(configSource!.read());
      this.subscription = configSource!.changes?.subscribe(() => this.changed());
    }
    if (this.settings.reloadOnSignal === 'SIGHUP') process.on('SIGHUP', this.onSignal);
    return parsed;
  }

  /** Set while a refresh reads the file, so its outcome is reported with the refresh's trigger. */
  private fileTrigger: ReloadTrigger | undefined;

  /**
   * Reads the file or the source again now and applies it (even when the file's content did not
   * change). Resolves once the outcome has been reported; never rejects.
   */
  async refresh(trigger: 'refresh' | 'signal'): Promise<void> {
    if (this.file !== undefined) {
      this.fileTrigger = trigger;
      try {
        await this.file.check({ force: true });
      } finally {
        this.fileTrigger = undefined;
      }
    } else if (this.settings.configSource !== undefined) this.readSource(trigger);
  }

  /** Stops every trigger (file watch, source subscription, signal listener). Idempotent. */
  close(): void {
    this.file?.close();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    process.removeListener('SIGHUP', this.onSignal);
  }

  /** A source change: changes emitted in the same tick are read once, after the last of them. */
  private changed(): void {
    if (this.queued) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      if (this.subscription !== undefined) this.readSource('configSource');
    });
  }

  private readSource(trigger: ReloadTrigger): void {
    let parsed: ParsedResilienceConfig;
    try {
      parsed = this.target.validate(this.settings.configSource!.read());
    } catch (error) {
      this.target.refuse(trigger, error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.target.apply(trigger, parsed);
  }
}

/**
 * Problems of the reload options (path, value, rule), empty when valid. `config` is the rest of the
 * module options: inline `policies`/`defaults` cannot be given beside a `configFile` or `configSource`.
 */
export function reloadSettingsProblems(
  settings: Record<keyof Omit<ReloadSettings, 'clock'>, unknown>,
  config: Record<string, unknown>,
): PolicyConfigError[] {
  const problems: PolicyConfigError[] = [];
  const { configFile, watch, configSource, reloadOnSignal } = settings;
  if (
    configFile !== undefined &&
    (typeof configFile !== 'string' || configFile.trim().length === 0)
  ) {
    problems.push(
      new PolicyConfigError(
        'configFile',
        configFile,
        'must be the path of a YAML or JSON file (relative to the working directory)',
      ),
    );
  }
  const source = configSource as
    { read?: unknown; changes?: { subscribe?: unknown } } | null | undefined;
  if (
    source !== undefined &&
    (typeof source?.read !== 'function' ||
      (source.changes !== undefined && typeof source.changes?.subscribe !== 'function'))
  ) {
    problems.push(
      new PolicyConfigError(
        'configSource',
        configSource,
        'must be { read(), changes? } (e.g. ResilienceConfigSource.fromConfigService(config, key))',
      ),
    );
  }
  if (configFile !== undefined && configSource !== undefined) {
    problems.push(
      new PolicyConfigError(
        'configSource',
        '[object]',
        'cannot be given with configFile: choose one source',
      ),
    );
  }
  const from =
    configFile !== undefined
      ? 'configFile'
      : configSource !== undefined
        ? 'configSource'
        : undefined;
  for (const key of ['policies', 'defaults']) {
    if (from !== undefined && config[key] !== undefined)
      problems.push(
        new PolicyConfigError(
          key,
          config[key],
          `cannot be given with ${from}: the config comes from there`,
        ),
      );
  }
  const watchProblems = watchOptionProblems(watch);
  problems.push(...watchProblems);
  if (
    watchProblems.length === 0 &&
    watch !== undefined &&
    watch !== false &&
    configFile === undefined
  ) {
    problems.push(new PolicyConfigError('watch', watch, 'needs configFile: it watches that file'));
  }
  if (reloadOnSignal !== undefined && reloadOnSignal !== 'SIGHUP') {
    problems.push(
      new PolicyConfigError('reloadOnSignal', reloadOnSignal, "must be 'SIGHUP' (or left out)"),
    );
  } else if (reloadOnSignal !== undefined && from === undefined) {
    problems.push(
      new PolicyConfigError(
        'reloadOnSignal',
        reloadOnSignal,
        'needs configFile or configSource: the signal re-reads it',
      ),
    );
  }
  return problems;
}

/** `watch`: a switch, or `{ debounce? }` (own keys only) with `debounce` the quiet time in ms. */
function watchOptionProblems(watch: unknown): PolicyConfigError[] {
  if (watch === undefined || typeof watch === 'boolean') return [];
  if (!isPlainObject(watch))
    return [
      new PolicyConfigError(
        'watch',
        watch,
        sectionRule(watch, 'must be true, false or { debounce }'),
      ),
    ];
  return optionProblems(watch, { debounce: DELAY_RULE }, 'watch', 'watch option');
}
