import { type MeterProvider, type TracerProvider, metrics, trace } from '@opentelemetry/api';
import type { CallObserver, Policy } from '../core/index.js';
import { Instruments, baseAttributes } from './otel-instruments.js';
import { TelemetryObserver } from './otel-observer.js';
import { INSTRUMENTATION_NAME, TelemetryAttributes } from './telemetry-names.js';

export {
  BREAKER_STATE_VALUES,
  CALL_DURATION_BUCKETS_MS,
  INSTRUMENTATION_NAME,
  MetricNames,
  TelemetryAttributes,
} from './telemetry-names.js';

/** Options of {@link withTelemetry}. */
export interface TelemetryOptions {
  /** Where metrics go. Default: the global meter provider at the time of the call (set up the SDK first). */
  meterProvider?: MeterProvider;
  /** Where spans go. Default: the global tracer provider (resolved at each call). */
  tracerProvider?: TracerProvider;
  /**
   * The dependency's host, recorded as `nresilience.host` (a host name only, never a URL). A keyed
   * instance's own host (the HTTP client's per-origin policies) takes precedence.
   */
  host?: string;
  /**
   * The dependency's service, recorded as `nresilience.service`. A keyed instance's own service (the
   * gRPC interceptor's per-service policies) takes precedence.
   */
  service?: string;
  /** One span per logical call. Default `true`; `false` records metrics only. */
  traces?: boolean;
}

const instrumentsByProvider = new WeakMap<MeterProvider, Instruments>();

/**
 * OpenTelemetry recording for policies (DESIGN §7): metrics through one meter named `nresilience`
 * (instruments created once per meter provider), and one span per logical call through the tracer
 * `nresilience`, a child of the caller's active context, with attempts, retries and refusals as span
 * events and status error on failure. It is a `CallObserver` ({@link ResilienceTelemetry.observer})
 * attached like any listener; use {@link withTelemetry}, or let `ResilienceModule` attach it to
 * registered policies.
 */
export class ResilienceTelemetry {
  private readonly instruments: Instruments;
  private readonly tracerProvider: TracerProvider;

  /**
   * @param meterProvider default: the global meter provider now
   * @param tracerProvider default: the global tracer provider (a proxy: resolved when spans start)
   */
  constructor(meterProvider?: MeterProvider, tracerProvider?: TracerProvider) {
    const provider = meterProvider ?? metrics.getMeterProvider();
    let instruments = instrumentsByProvider.get(provider);
    if (instruments === undefined) {
      instruments = new Instruments(provider.getMeter(INSTRUMENTATION_NAME));
      instrumentsByProvider.set(provider, instruments);
    }
    this.instruments = instruments;
    this.tracerProvider = tracerProvider ?? trace;
  }

  /**
   * `policy` with this telemetry's observer added (`withListener` semantics: listeners and logging
   * already attached keep working). The gauges observe the returned policy at once (named policies
   * only) and then each instance that runs calls.
   */
  instrument(
    policy: Policy,
    options: Pick<TelemetryOptions, 'host' | 'service' | 'traces'> = {},
  ): Policy {
    const instrumented = policy.withListener(this.observer(options));
    this.instruments.observe(
      instrumented,
      baseAttributes(instrumented.name, options.host, options.service),
    );
    return instrumented;
  }

  /**
   * The observer alone (metrics, and one span per call unless `traces: false`), for
   * `policy.withListener(observer)` or composing by hand. `host` and `service` label the instances
   * that carry no label of their own.
   */
  observer(options: Pick<TelemetryOptions, 'host' | 'service' | 'traces'> = {}): CallObserver {
    const tracer =
      options.traces === false ? undefined : this.tracerProvider.getTracer(INSTRUMENTATION_NAME);
    return new TelemetryObserver(
      this.instruments,
      tracer,
      options.host,
      options.service,
    ) as CallObserver;
  }

  /** Counts one config reload by outcome (`nresilience.config.reloads`; rare, so a plain counter). */
  recordReload(outcome: 'reloaded' | 'reloadFailed'): void {
    this.instruments.configReloads.add(1, { [TelemetryAttributes.outcome]: outcome });
  }
}

/**
 * `policy` with OpenTelemetry metrics and spans attached (see {@link ResilienceTelemetry}). The
 * observer is added (`withListener` semantics: listeners and logging already attached keep working);
 * `policy.with({ onEvent })` afterwards replaces it, spans included. Each call attaches once more, so
 * attach once.
 *
 * ```ts
 * const payments = withTelemetry(Resilience.http.with({ name: 'payments' }), { host: 'pay.example.com' });
 * ```
 */
export function withTelemetry(policy: Policy, options: TelemetryOptions = {}): Policy {
  return new ResilienceTelemetry(options.meterProvider, options.tracerProvider).instrument(
    policy,
    options,
  );
}
