/** What asked for a reload: `registry.reload(config)`, the watched file, a `configSource` change, `registry.refresh()` or the signal. */
export type ReloadTrigger = 'api' | 'file' | 'configSource' | 'refresh' | 'signal';

/**
 * One reload of a `PolicyRegistry`, applied or refused, as given to `registry.onReload(listener)`.
 * - `reloaded`: the new config is in force for calls started from now on; `names` are its policies.
 * - `reloadFailed`: the new config was refused (`error` says why, every problem with its full path:
 *   a `ResilienceConfigError`, or a `ConfigFileError` naming the file); the old config stays in
 *   force, `names` are its policies.
 */
export interface ReloadEvent {
  readonly kind: 'reloaded' | 'reloadFailed';
  readonly trigger: ReloadTrigger;
  /** Why the reload was refused; `undefined` for `reloaded`. */
  readonly error: Error | undefined;
  /** The policy names in force after the event, in config order. */
  readonly names: readonly string[];
}

/** Receives every {@link ReloadEvent}; a throwing listener is swallowed. */
export type ReloadListener = (event: ReloadEvent) => void;

/** Reloads applied and refused since start-up (start-up itself not counted). */
export interface ReloadCounts {
  readonly reloaded: number;
  readonly reloadFailed: number;
}
