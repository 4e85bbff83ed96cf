import { Logger } from '@nestjs/common';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { type Policy, PolicyConfigError } from '../core/index.js';
import { describeValue } from '../core/internal.js';
import type { ModuleOptionsReading, TelemetrySettings } from './module-settings.js';
import {
  LoggingListener,
  LogSampling,
  type ResilienceLogger,
} from '../telemetry/logging-listener.js';

/** Injection token of the {@link PolicyInstrumentation} `ResilienceModule` builds from its options. */
export const RESILIENCE_INSTRUMENTATION = 'RESILIENCE_INSTRUMENTATION';

/** The logger context prefix: policy `payments` logs as `NResilience.payments`. */
export const LOGGER_CONTEXT_PREFIX = 'NResilience.';

/** What the module needs from the OpenTelemetry side (`ResilienceTelemetry` in `lib/telemetry`). */
interface TelemetryInstrumenter {
  instrument(policy: Policy, options?: { traces?: boolean }): Policy;
  recordReload(outcome: 'reloaded' | 'reloadFailed'): void;
}

/**
 * A Nest `Logger` with the context `NResilience.<policy>` (one per policy, so an application can
 * filter per dependency). It leaves level filtering to the application's logger: Nest 11's static
 * `Logger.isLevelEnabled` answers false for every level unless the app passed explicit levels, which
 * would silence even "breaker opened"; the listener writes few records in the `default` profile anyway.
 */
export class NestResilienceLogger implements ResilienceLogger {
  private readonly logger: Logger;

  /** @param policy the policy name (the context becomes `NResilience.<policy>`) */
  constructor(policy: string) {
    this.logger = new Logger(LOGGER_CONTEXT_PREFIX + policy);
  }

  /** Writes at `log`. */
  log(message: string): void {
    this.logger.log(message);
  }

  /** Writes at `warn`. */
  warn(message: string): void {
    this.logger.warn(message);
  }

  /** Writes at `debug`. */
  debug(message: string): void {
    this.logger.debug(message);
  }

  /** Writes at `verbose`. */
  verbose(message: string): void {
    this.logger.verbose(message);
  }
}

/**
 * What `ResilienceModule` attaches to every registered policy: the OpenTelemetry observer (when
 * `@opentelemetry/api` is installed and `telemetry` is not `false`), then the logging listener
 * writing to a Nest `Logger` (unless `logging: 'off'`), both with `withListener` semantics. A policy's logging state
 * (repeat windows, sampling count) is pinned to its name, so a reload does not reset it.
 */
export class PolicyInstrumentation {
  private readonly listeners = new Map<string, LoggingListener>();

  /**
   * @param logging the resolved logging settings, or `undefined` for none
   * @param telemetry the OpenTelemetry instrumenter, or `undefined` for none
   * @param traces whether the instrumenter records spans
   * @param loggerFor the logger of a policy (default: a Nest `Logger` with context `NResilience.<name>`)
   * @internal created by `ResilienceModule` (inject it with `RESILIENCE_INSTRUMENTATION`).
   */
  constructor(
    readonly logging: { profile: 'default' | 'verbose'; sampling: LogSampling } | undefined,
    private readonly telemetry: TelemetryInstrumenter | undefined,
    private readonly traces = true,
    private readonly loggerFor: (policy: string) => ResilienceLogger = (policy) =>
      new NestResilienceLogger(policy),
  ) {}

  /** Whether OpenTelemetry recording is attached to policies. */
  get telemetryEnabled(): boolean {
    return this.telemetry !== undefined;
  }

  /** Counts a config reload (`nresilience.config.reloads` by outcome) when telemetry is attached. */
  recordReload(outcome: 'reloaded' | 'reloadFailed'): void {
    this.telemetry?.recordReload(outcome);
  }

  /** `policy` (registered as `name`) with telemetry and logging attached as configured. */
  instrument(name: string, policy: Policy): Policy {
    let result = policy;
    if (this.telemetry !== undefined)
      result = this.telemetry.instrument(result, { traces: this.traces });
    if (this.logging !== undefined) {
      let listener = this.listeners.get(name);
      if (listener === undefined) {
        listener = new LoggingListener(this.loggerFor(name), policy.options.clock, this.logging);
        this.listeners.set(name, listener);
      }
      result = result.withListener(listener);
    }
    return result;
  }
}

/**
 * Builds the module's instrumentation from its options as read once (the
 * `RESILIENCE_INSTRUMENTATION` provider). OpenTelemetry is loaded with a dynamic `import()` so the
 * root entry works without `@opentelemetry/api` installed. Refused options attach nothing: the
 * registry throws their error in its init and the application does not start.
 * @throws ResilienceConfigError naming `telemetry` when a given provider throws
 */
export async function createInstrumentation(
  reading: ModuleOptionsReading,
): Promise<PolicyInstrumentation> {
  const settings = reading.valid;
  const telemetry = settings?.telemetry ?? false;
  let instrumenter: TelemetryInstrumenter | undefined;
  if (telemetry !== false) {
    let otel: typeof import('../telemetry/otel-telemetry.js') | undefined;
    try {
      otel = await import('../telemetry/otel-telemetry.js');
    } catch (error) {
      if (!isMissingOpenTelemetry(error)) throw error;
      if (telemetry.option !== undefined) {
        new Logger('NResilience').warn(
          'telemetry is on but @opentelemetry/api is not installed: policies record no metrics or spans',
        );
      }
    }
    if (otel !== undefined) instrumenter = attachTelemetry(otel, telemetry);
  }
  return new PolicyInstrumentation(
    settings?.logging,
    instrumenter,
    telemetry === false || telemetry.traces,
  );
}

/** The OpenTelemetry providers `ResilienceTelemetry` takes (a type only: OpenTelemetry is loaded dynamically). */
type Providers = ConstructorParameters<
  typeof import('../telemetry/otel-telemetry.js').ResilienceTelemetry
>;

/** The OpenTelemetry instrumenter on the given providers; a provider that throws stops start-up with a config error naming it. */
function attachTelemetry(
  otel: typeof import('../telemetry/otel-telemetry.js'),
  setting: TelemetrySettings,
): TelemetryInstrumenter {
  try {
    return new otel.ResilienceTelemetry(
      setting.meterProvider as Providers[0],
      setting.tracerProvider as Providers[1],
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : describeValue(error);
    throw new ResilienceConfigError([
      new PolicyConfigError(
        'telemetry',
        setting.option,
        `could not be attached: its provider threw "${reason}"`,
      ),
    ]);
  }
}

function isMissingOpenTelemetry(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (
    (code === 'ERR_MODULE_NOT_FOUND' ||
      code === 'MODULE_NOT_FOUND' ||
      message.includes('Cannot find module')) &&
    message.includes('@opentelemetry/api')
  );
}
