/** The part of an RxJS `Observable` a config source needs (so `@nestjs/config` stays optional). */
export interface ConfigChanges {
  subscribe(observer: (value: unknown) => void): { unsubscribe(): void };
}

/** The part of `@nestjs/config`'s `ConfigService` {@link ResilienceConfigSource.fromConfigService} uses. */
export interface ConfigServiceLike {
  get(propertyPath: string): unknown;
  /** `ConfigService.changes$`: one event per `set(path, value)`. */
  readonly changes$: {
    subscribe(observer: (event: { path: string }) => void): { unsubscribe(): void };
  };
}

/**
 * Where the registry reads its reloadable config (`{ policies, defaults }`) from, other than a file:
 * the module option `configSource`. `read()` is called at start-up and on every reload; each value
 * `changes` emits asks for a reload (emissions in the same tick are read once, so several `set()`
 * calls in a row apply together).
 */
export interface ResilienceConfigSource {
  /** The current config: `{ policies, defaults? }` as plain JSON. */
  read(): unknown;
  /** Emits when the config may have changed. Optional: without it, reload with `registry.refresh()`. */
  readonly changes?: ConfigChanges;
}

/** Ready-made config sources. */
export const ResilienceConfigSource = {
  /**
   * Reads the config under `key` of `@nestjs/config`'s `ConfigService`, and reloads whenever
   * `configService.set(path, value)` changes `key` or anything below it (`resilience`,
   * `resilience.policies.payments.attempts`).
   *
   * ```ts
   * ResilienceModule.forRootAsync({
   *   imports: [ConfigModule.forRoot({ load: [() => ({ resilience: { policies: { payments: { attempts: 3 } } } })] })],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ configSource: ResilienceConfigSource.fromConfigService(config, 'resilience') }),
   * })
   * ```
   * @param config the application's `ConfigService`
   * @param key the property path holding `{ policies, defaults? }`, a non-empty string
   * @throws TypeError for an empty key or an object without `get` and `changes$`
   */
  fromConfigService(config: ConfigServiceLike, key: string): ResilienceConfigSource {
    if (typeof key !== 'string' || key.length === 0)
      throw new TypeError(
        `ResilienceConfigSource.fromConfigService: key must be a non-empty string, got ${String(key)}`,
      );
    if (typeof config?.get !== 'function' || typeof config.changes$?.subscribe !== 'function') {
      throw new TypeError(
        'ResilienceConfigSource.fromConfigService: config must be a @nestjs/config ConfigService (get and changes$)',
      );
    }
    const prefix = `${key}.`;
    return {
      read: () => config.get(key),
      changes: {
        subscribe: (observer) =>
          config.changes$.subscribe((event) => {
            const path = String(event?.path);
            if (path === key || path.startsWith(prefix) || key.startsWith(`${path}.`))
              observer(event);
          }),
      },
    };
  },
} as const;
