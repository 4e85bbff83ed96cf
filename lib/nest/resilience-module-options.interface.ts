import type { Classifier, Clock } from '../core/index.js';
import type { ResilienceConfig } from '../config/policy-config.js';
import type { LoggingProfile, LogSampling } from '../telemetry/logging-listener.js';
import type { ResilienceConfigSource } from './resilience-config-source.js';
import type { ModuleRedisOption } from './module-rate-store.js';

/**
 * The `logging` module option: a profile (`'off'`, `'default'`, `'verbose'`), or `{ profile, sampling }`
 * with `sampling: LogSampling.oneIn(n)` (or the plain `{ oneIn: n }`). Default `'default'`.
 */
export type ModuleLoggingOption =
  LoggingProfile | { profile?: LoggingProfile; sampling?: LogSampling };

/**
 * The `telemetry` module option. `false` turns OpenTelemetry off; `true` or absent attaches it when
 * `@opentelemetry/api` is installed (silently skipped when it is not and the option is absent). An
 * object picks the providers (default: the global ones when the application starts) and whether
 * spans are recorded.
 */
export type ModuleTelemetryOption =
  | boolean
  | {
      /** An OpenTelemetry `MeterProvider`. */
      meterProvider?: object;
      /** An OpenTelemetry `TracerProvider`. */
      tracerProvider?: object;
      /** One span per call. Default `true`. */
      traces?: boolean;
    };

/**
 * What `ResilienceModule.forRoot(...)` takes (and `forRootAsync`'s `useFactory` returns): the policy
 * config plus process-level settings that a reload cannot change.
 *
 * ```ts
 * ResilienceModule.forRoot({
 *   policies: { payments: { attempts: 3, deadline: '10s', budget: { fraction: 0.1 } } },
 *   defaults: { backoff: { transientBase: '100ms', jitter: 'full' } },
 *   exceptionFilter: true,
 * })
 * ```
 */
export interface ResilienceModuleOptions extends Partial<ResilienceConfig> {
  /**
   * Read `{ policies, defaults }` from this YAML or JSON file (`.json` as JSON, anything else as
   * YAML; relative to the working directory; symlinks followed) instead of giving them inline. The
   * app does not start when the file is missing, blank, unparsable or invalid (a `ConfigFileError`
   * naming the file, and for invalid content every problem by its path).
   */
  configFile?: string;
  /**
   * Watch `configFile` and reload on every change, after `debounce` ms of quiet (default 250).
   * Survives editors that truncate then write (a blank file is never applied), atomic replace by
   * rename, and the Kubernetes ConfigMap `..data` symlink swap. An invalid change is refused
   * (`reloadFailed` event, logged once) and the old config stays. Default `false`.
   */
  watch?: boolean | { debounce?: number };
  /**
   * Read `{ policies, defaults }` from here instead of inline, and reload whenever `changes` emits —
   * e.g. `ResilienceConfigSource.fromConfigService(configService, 'resilience')` reloads on
   * `configService.set(...)`. Not with `configFile`.
   */
  configSource?: ResilienceConfigSource;
  /**
   * `'SIGHUP'`: re-read `configFile` or `configSource` on SIGHUP (`kill -HUP <pid>`) and reload.
   * Opt-in (installing a listener replaces Node's default of exiting on SIGHUP); removed on close.
   */
  reloadOnSignal?: 'SIGHUP';
  /**
   * Time source for every registered policy and retry-budget bucket. Default: the system clock.
   * Pass a `FakeClock` in tests so nothing waits on real time.
   */
  clock?: Clock;
  /** Uniform [0, 1) source for every policy's jitter. Default `Math.random`; fix it in tests. */
  random?: () => number;
  /**
   * Classifiers written in code, by policy name (each must name a configured policy, or the app does
   * not start): `{ payments: Classifier.http.with(myRule) }`. Each replaces that name's `classifier`
   * from config, across reloads. Default: none (config, then the preset, decides; a thrown
   * `HttpException` is judged by its status under every default classifier).
   */
  classifiers?: Record<string, Classifier>;
  /**
   * OpenTelemetry metrics and spans on every registered policy (meter and tracer `nresilience`).
   * Default: on when `@opentelemetry/api` is installed; `false` turns it off. See {@link ModuleTelemetryOption}.
   */
  telemetry?: ModuleTelemetryOption;
  /**
   * Logging of every registered policy through Nest's `Logger`, context `NResilience.<name>`:
   * `'off'`, `'default'` (the default: incidents only, nothing for healthy calls), `'verbose'` (every
   * traffic record at `log`), or `{ profile, sampling: LogSampling.oneIn(n) }` (sampling thins the
   * `verbose` profile's traffic records).
   */
  logging?: ModuleLoggingOption;
  /**
   * Keep answering after SIGTERM for `grace` (ms or `'5s'`), as terminus' `gracefulShutdownTimeoutMs`
   * and a Kubernetes `preStop` sleep do: readiness (`downWhenShuttingDown`) answers down at once,
   * answers carry `Connection: close` and idle keep-alive connections are closed, the server keeps
   * accepting for the grace, then stops accepting and answers what it accepted (see `ShutdownGrace`,
   * docs/shutdown.md). Default: none (the server closes as soon as Nest closes it).
   */
  shutdown?: ShutdownOptions;
  /**
   * The Redis that rate limits written with `limit: { rate: { …, shared: true } }` share their tokens
   * through, across every process of the fleet (`@nresilience/nestjs/redis`; needs the optional peer
   * `ioredis`): `{ url }` (the module connects, waiting up to `connectWait` ms, default 1000, and
   * quits on close) or `{ client }` (yours, left open). Read once at start-up, not by a reload.
   * Default: none (a shared rate limit then stops start-up, naming it). See docs/rate-limits.md.
   */
  redis?: ModuleRedisOption;
}

/**
 * Options that shape the module definition itself, given beside the options of `forRoot(...)` or
 * beside `useFactory` in `forRootAsync({ ... })` (they cannot come from the async factory, because
 * they decide which providers exist).
 */
export interface ResilienceModuleExtras {
  /**
   * Register the module globally, so every module can inject `PolicyRegistry` and `@InjectPolicy`
   * handles without importing it. Default `true` (like a root-level infrastructure module; set
   * `false` to import it explicitly where needed).
   */
  isGlobal?: boolean;
  /**
   * Register `ResilienceExceptionFilter` as a global filter (`APP_FILTER`): `true`; or
   * `{ badGateway: true }` to register `ResilienceBadGatewayFilter` instead, which also answers 502
   * when a call's attempts ran out on the work's own error (and catches every exception, handing the
   * others to Nest's own handling). Default `false`.
   */
  exceptionFilter?: boolean | { badGateway?: boolean };
}

/**
 * `shutdown` in `ResilienceModule.forRoot(...)`: keep answering for a while after SIGTERM, the
 * pattern of terminus' `gracefulShutdownTimeoutMs` and a Kubernetes `preStop` sleep.
 */
export interface ShutdownOptions {
  /**
   * How long the server keeps accepting and answering after SIGTERM before it stops accepting: a ms
   * number or a duration string (`'5s'`), >= 0. Give it about the time your load balancer takes to
   * stop sending (Kubernetes: the endpoints update, a few seconds), and less than the pod's
   * `terminationGracePeriodSeconds` minus the time in-flight requests need.
   */
  grace: number | string;
}
