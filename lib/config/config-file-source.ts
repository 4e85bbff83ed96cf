import { type FSWatcher, realpathSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { type Clock, SystemClock, type TimerHandle } from '../core/index.js';
import { checkValue, DELAY_RULE, given } from '../core/internal.js';
import { ConfigFileError, parseConfigText, readConfigText, unreadable } from './config-file.js';

/** Quiet time after the last file event before the file is read again, in ms (ConfigFileSourceOptions.debounce). */
export const DEFAULT_CONFIG_DEBOUNCE_MS = 250;

/** Wait before trying again to watch a directory whose watcher failed (it was removed, or is not there yet), in ms. */
const REWATCH_MS = 1000;

/** What {@link ConfigFileSource} is built from. */
export interface ConfigFileSourceOptions<T> {
  /** The config file (`.json` read as JSON, anything else as YAML). Symlinks are followed. */
  path: string;
  /**
   * Turns a parsed document into a config, or throws (the error becomes the `cause` of an `invalid`
   * ConfigFileError). Called for the first read ({@link ConfigFileSource.open}) and every change.
   */
  validate: (document: unknown) => T;
  /**
   * Receives each new valid config after a change, once per distinct file content. A throw here (the
   * registry refusing the config) is reported like a validation failure, through `onError`.
   */
  onConfig: (config: T) => void;
  /**
   * Receives each failed change: `unreadable` (the file vanished), `unparsable`, `invalid`,
   * `unwatchable` (a directory watch failed; it is retried every second). Reported once per distinct
   * content or failure; the last good config stays in force. Default: ignored.
   */
  onError?: (error: ConfigFileError) => void;
  /** Quiet time after the last file event before the file is read, in ms, >= 0. Default 250. */
  debounce?: number;
  /** Clock of the debounce and re-watch timers. Default: the system clock (unref'd timers). */
  clock?: Clock;
  /** Watch the file (default `true`); `false` reads it only on `open()` and `check()`. */
  watch?: boolean;
}

/** A watched directory and the entry names in it whose events mean the config may have changed. */
interface Watched {
  readonly watcher: FSWatcher;
  names: Set<string>;
  /** Also any `..`-prefixed entry: Kubernetes' atomic writer swaps the `..data` symlink. */
  dotEntries: boolean;
}

/**
 * A config file watched for changes, which hands each new valid config to a callback (framework-free:
 * the Nest registry, the CLI and scripts use it alike).
 *
 * It watches directories, not the file: the file's directory (events for the file's own name and, for
 * the Kubernetes ConfigMap layout `config.yaml -> ..data/config.yaml`, for the `..`-prefixed entries the
 * `..data` swap touches) and, when the path is a symlink, the directory of the file it resolves to
 * (re-resolved after every read). So it survives the three ways files really change: an editor that
 * truncates then writes in place, an atomic replace by rename (which kills a watch on the file's
 * inode), and a ConfigMap update. Every event re-arms one debounce timer; the file is read once the
 * events have been quiet for `debounce` ms, and:
 * - a blank file is skipped (an editor between truncating and writing): the final content applies;
 * - content equal to the last read (valid or not) is skipped: a change applies once, a failure is
 *   reported once;
 * - unparsable or invalid content is reported through `onError` and the last good config stays.
 *
 * ```ts
 * const source = new ConfigFileSource({ path: 'resilience.yaml', validate: parseResilienceConfig, onConfig: apply, onError: log });
 * const initial = source.open(); // throws ConfigFileError: the app must not start without a valid file
 * // ... later
 * source.close();
 * ```
 * The watchers are not persistent and the timers unref'd: a source never keeps the process alive.
 */
export class ConfigFileSource<T> {
  private readonly path: string;
  private readonly debounce: number;
  private readonly clock: Clock;
  private readonly watched = new Map<string, Watched>();
  private timer: TimerHandle | undefined;
  private rewatchTimer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private lastText: string | undefined;
  /** The last `unreadable` / `unwatchable` report, so a state that persists is reported once. */
  private readonly lastFailure = new Map<'unreadable' | 'unwatchable', string>();
  private closed = false;

  /**
   * @param options see {@link ConfigFileSourceOptions}
   * @throws PolicyConfigError (field `debounce`) when `debounce` is not a finite duration in ms >= 0.
   */
  constructor(private readonly options: ConfigFileSourceOptions<T>) {
    this.debounce = checkValue(
      DELAY_RULE,
      'debounce',
      given(options.debounce, DEFAULT_CONFIG_DEBOUNCE_MS),
    );
    this.path = resolve(options.path);
    this.clock = options.clock ?? SystemClock.instance;
  }

  /**
   * Reads, parses and validates the file now (synchronously) and starts watching it (unless `watch: false`).
   * @returns the validated config (not passed to `onConfig`: the caller applies the first one)
   * @throws ConfigFileError `unreadable`, `empty`, `unparsable` or `invalid` (nothing is watched then);
   *   Error when the source is already open or closed.
   */
  open(): T {
    if (this.lastText !== undefined || this.closed)
      throw new Error(`ConfigFileSource(${this.options.path}) can be opened once`);
    const text = readConfigText(this.path);
    const config = this.validated(parseConfigText(text, this.options.path));
    this.lastText = text;
    this.rewatch();
    return config;
  }

  /**
   * Reads the file again now, without waiting for an event (a SIGHUP, a manual trigger). With
   * `force`, content equal to the last read is applied (or reported) again.
   * @returns when this read (and any that queued behind it) has been handled; never rejects.
   */
  check(options: { force?: boolean } = {}): Promise<void> {
    if (options.force) this.lastText = undefined;
    if (this.running !== undefined) {
      this.again = true;
      return this.idle();
    }
    this.running = this.read().finally(() => {
      this.running = undefined;
      if (this.again && !this.closed) {
        this.again = false;
        void this.check();
      }
    });
    return this.idle();
  }

  /** Resolves once no read is running or queued (tests and shutdown wait on it). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /** Whether at least one directory watcher is live (false before `open`, after `close`, or while re-watching). */
  get watching(): boolean {
    return this.watched.size > 0;
  }

  /** Stops watching and cancels pending timers. A read in progress finishes but applies nothing. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    if (this.rewatchTimer !== undefined) this.clock.clearTimer(this.rewatchTimer);
    this.timer = this.rewatchTimer = undefined;
    for (const { watcher } of this.watched.values()) watcher.close();
    this.watched.clear();
  }

  private validated(document: unknown): T {
    try {
      return this.options.validate(document);
    } catch (error) {
      throw this.invalid(error);
    }
  }

  private invalid(error: unknown): ConfigFileError {
    return new ConfigFileError(
      this.options.path,
      'invalid',
      `invalid config: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }

  /** A file event: (re)start the quiet period. */
  private schedule(): void {
    if (this.closed) return;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = this.clock.setTimer(this.debounce, () => {
      this.timer = undefined;
      void this.check();
    });
  }

  private async read(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      this.rewatch();
      this.fail(unreadable(this.options.path, error));
      return;
    }
    this.lastFailure.delete('unreadable');
    this.rewatch();
    if (this.closed || text === this.lastText) return;
    let config: T;
    try {
      const document = parseConfigText(text, this.options.path);
      this.lastText = text;
      config = this.validated(document);
    } catch (error) {
      // Blank: an editor truncated the file and has not written yet; the final content will come.
      if (error instanceof ConfigFileError && error.problem === 'empty') return;
      this.lastText = text;
      this.fail(error instanceof ConfigFileError ? error : this.invalid(error));
      return;
    }
    try {
      this.options.onConfig(config);
    } catch (error) {
      this.fail(this.invalid(error));
    }
  }

  /**
   * Reports a failure. Content failures are reported once through `lastText`; a missing file or a
   * failing watch is reported once per message until it clears.
   */
  private fail(error: ConfigFileError): void {
    if (error.problem === 'unreadable' || error.problem === 'unwatchable') {
      if (this.lastFailure.get(error.problem) === error.message) return;
      this.lastFailure.set(error.problem, error.message);
    }
    try {
      this.options.onError?.(error);
    } catch {
      // A throwing error handler must not stop the watcher.
    }
  }

  /** Watches the directories that matter now (the file's, and its resolved target's), and nothing else. */
  private rewatch(): void {
    if (this.closed || this.options.watch === false) return;
    const wanted = new Map<string, { names: Set<string>; dotEntries: boolean }>();
    wanted.set(dirname(this.path), { names: new Set([basename(this.path)]), dotEntries: true });
    let real: string | undefined;
    try {
      real = realpathSync(this.path);
    } catch {
      real = undefined; // missing right now: the directory watch sees it come back
    }
    if (real !== undefined && real !== this.path) {
      const entry = wanted.get(dirname(real));
      if (entry === undefined)
        wanted.set(dirname(real), { names: new Set([basename(real)]), dotEntries: false });
      else entry.names.add(basename(real));
    }
    for (const [dir, watched] of this.watched) {
      if (!wanted.has(dir)) {
        watched.watcher.close();
        this.watched.delete(dir);
      }
    }
    for (const [dir, want] of wanted) {
      const current = this.watched.get(dir);
      if (current !== undefined) {
        current.names = want.names;
        current.dotEntries = want.dotEntries;
        continue;
      }
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) =>
          this.onEvent(dir, name),
        );
        watcher.on('error', (error) => this.lost(dir, watcher, error));
        this.watched.set(dir, { watcher, ...want });
        this.lastFailure.delete('unwatchable');
      } catch (error) {
        this.lost(dir, undefined, error);
      }
    }
  }

  private onEvent(dir: string, name: string | Buffer | null): void {
    const watched = this.watched.get(dir);
    if (watched === undefined) return;
    const entry = name === null ? null : String(name);
    if (
      entry === null ||
      watched.names.has(entry) ||
      (watched.dotEntries && entry.startsWith('..'))
    )
      this.schedule();
  }

  /** A directory watch failed or could not start: report it, and try again (and re-read) in a second. */
  private lost(dir: string, watcher: FSWatcher | undefined, error: unknown): void {
    watcher?.close();
    if (watcher === undefined || this.watched.get(dir)?.watcher === watcher)
      this.watched.delete(dir);
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
    this.fail(
      new ConfigFileError(
        this.options.path,
        'unwatchable',
        `cannot watch ${dir} (${code}); retrying every ${REWATCH_MS} ms`,
        { cause: error },
      ),
    );
    if (this.closed || this.rewatchTimer !== undefined) return;
    this.rewatchTimer = this.clock.setTimer(REWATCH_MS, () => {
      this.rewatchTimer = undefined;
      void this.check();
    });
  }
}
