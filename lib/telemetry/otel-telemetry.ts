import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type ObservableResult,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  ValueType,
  context,
  metrics,
  trace,
} from '@opentelemetry/api';
import { Ambient } from '../core/ambient/ambient-context.js';
import type { BreakerState } from '../core/breaker/breaker-state.js';
import type { CallEvent, CallEventListener } from '../core/execution/events.js';
import type { Policy } from '../core/policy/policy.js';
import type { CallWrapper, ExecutablePolicy } from '../core/policy/policy-options.js';

/** Name of the meter and of the tracer (DESIGN §7; the same as the .NET library's, so fleets read as one). */
export const INSTRUMENTATION_NAME = 'nresilience';

/** Names of the instruments recorded (DESIGN §7). */
export const MetricNames = {
  /** Counter (observable, monotonic): logical calls, one per call, on its terminal event (`policy`, `outcome`, `reason`). */
  calls: 'nresilience.calls',
  /** Counter (observable, monotonic): attempts that reached the dependency (`policy`, `outcome` = the attempt's verdict). */
  attempts: 'nresilience.attempts',
  /** Counter: refusals by a guard of this process (`policy`, `reason`). */
  rejections: 'nresilience.rejections',
  /** Counter: hedged attempts started (`policy`). */
  hedges: 'nresilience.hedges',
  /** Counter: attempts ended by a stall (`AttemptStalledError`) (`policy`). */
  stalls: 'nresilience.stalls',
  /** Counter: streams that resumed after a failure (`policy`). */
  streamResumed: 'nresilience.stream_resumed',
  /** Histogram: duration of a logical call, ms (`policy`, `outcome`, `reason`). */
  callDuration: 'nresilience.call.duration',
  /** Observable gauge: breaker state per policy, coded by {@link BREAKER_STATE_VALUES}. */
  breakerState: 'nresilience.breaker.state',
  /** Observable gauge: retry-budget utilization per policy, 0 (full bucket) to 1 (empty). */
  budgetUtilization: 'nresilience.budget.utilization',
  /** Counter: config reloads of a Nest registry (`outcome` = `reloaded` / `reloadFailed`). */
  configReloads: 'nresilience.config.reloads',
} as const;

/** Attribute keys. Values are bounded sets: never a URL path, an id or anything from the protected call. */
export const TelemetryAttributes = {
  /** The policy's name. */
  policy: 'nresilience.policy',
  /** The dependency's host, where the policy knows it (`TelemetryOptions.host`). */
  host: 'nresilience.host',
  /** The dependency's service, where the policy knows it (`TelemetryOptions.service`). */
  service: 'nresilience.service',
  /** `succeeded` / `failed` / `rejected` for calls; the verdict (`Ok`, `Transient`, …) for attempts. */
  outcome: 'nresilience.outcome',
  /** The stop reason (calls) or the refusal reason (rejections). */
  reason: 'nresilience.reason',
  /** Spans: the ambient criticality of the call, by level name (`critical` when unlabeled). */
  criticality: 'nresilience.criticality',
  /** Span events: the attempt number. */
  attempt: 'nresilience.attempt',
  /** Span events: the attempt's duration (ms). */
  duration: 'nresilience.duration_ms',
  /** Span events: the backoff before the next attempt (ms). */
  delay: 'nresilience.delay_ms',
  /** Span events: the error's `name`. */
  errorType: 'exception.type',
} as const;

/** Values of the `nresilience.breaker.state` gauge, from healthy to cut off. */
export const BREAKER_STATE_VALUES: Readonly<Record<BreakerState, number>> = Object.freeze({
  closed: 0,
  recovering: 1,
  halfOpen: 2,
  open: 3,
  isolated: 4,
});

/** Bucket boundaries (ms) advised for `nresilience.call.duration`. */
export const CALL_DURATION_BUCKETS_MS: readonly number[] = Object.freeze([1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000]);

/** Options of {@link withTelemetry}. */
export interface TelemetryOptions {
  /** Where metrics go. Default: the global meter provider at the time of the call (set up the SDK first). */
  meterProvider?: MeterProvider;
  /** Where spans go. Default: the global tracer provider (resolved at each call). */
  tracerProvider?: TracerProvider;
  /** The dependency's host, recorded as `nresilience.host` (a host name only, never a URL). */
  host?: string;
  /** The dependency's service, recorded as `nresilience.service`. */
  service?: string;
  /** One span per logical call. Default `true`; `false` records metrics only. */
  traces?: boolean;
}

/**
 * A running total for one attribute set of an observable counter: the hot path adds to a number, the
 * SDK reads the totals when it collects (OpenTelemetry JS hashes the attributes of every synchronous
 * `add`, which would cost more than the call being protected). Shared by every listener of one meter.
 */
class Tally {
  count = 0;
  constructor(readonly attributes: Attributes) {}
}

/** The attributes of one (policy, host, service), each set built once and reused for every record. */
/** The attributes every series of a policy carries: its name, and host and service where known. */
function baseAttributes(policy: string, host: string | undefined, service: string | undefined): Attributes {
  const base: Attributes = { [TelemetryAttributes.policy]: policy };
  if (host !== undefined) base[TelemetryAttributes.host] = host;
  if (service !== undefined) base[TelemetryAttributes.service] = service;
  return Object.freeze(base);
}

class AttributeSets {
  readonly base: Attributes;
  private readonly byReason = new Map<string, Tally>();
  private readonly byVerdict = new Map<string, Tally>();
  private readonly byRejection = new Map<string, Attributes>();

  constructor(
    readonly policy: string,
    host: string | undefined,
    service: string | undefined,
    private readonly instruments: Instruments,
  ) {
    this.base = baseAttributes(policy, host, service);
  }

  /** The calls tally for `policy` + `outcome` (terminal kind) + `reason`. */
  call(outcome: string, reason: string): Tally {
    let tally = this.byReason.get(reason);
    if (tally === undefined || tally.attributes[TelemetryAttributes.outcome] !== outcome) {
      tally = this.instruments.callTally({ ...this.base, [TelemetryAttributes.outcome]: outcome, [TelemetryAttributes.reason]: reason });
      this.byReason.set(reason, tally);
    }
    return tally;
  }

  /** The attempts tally for `policy` + `outcome` (the attempt's verdict). */
  attempt(verdict: string): Tally {
    let tally = this.byVerdict.get(verdict);
    if (tally === undefined) {
      tally = this.instruments.attemptTally({ ...this.base, [TelemetryAttributes.outcome]: verdict });
      this.byVerdict.set(verdict, tally);
    }
    return tally;
  }

  /** `policy` + `reason` of a refusal. */
  rejection(reason: string): Attributes {
    let set = this.byRejection.get(reason);
    if (set === undefined) {
      set = Object.freeze({ ...this.base, [TelemetryAttributes.reason]: reason });
      this.byRejection.set(reason, set);
    }
    return set;
  }
}

/** A policy the gauges observe: the last instance of that name (and host, service) that ran a call. */
interface Observed {
  readonly policy: ExecutablePolicy;
  readonly attributes: Attributes;
}

/** The instruments of one meter: created once, shared by every policy recording through that meter. */
class Instruments {
  readonly rejections: Counter;
  readonly hedges: Counter;
  readonly stalls: Counter;
  readonly streamResumed: Counter;
  readonly configReloads: Counter;
  readonly duration: Histogram;
  private readonly observed = new Map<string, Observed>();
  private readonly calls = new Map<string, Tally>();
  private readonly attempts = new Map<string, Tally>();

  constructor(meter: Meter) {
    const int = { valueType: ValueType.INT };
    meter
      .createObservableCounter(MetricNames.calls, { ...int, unit: '{call}', description: 'Logical calls, one per call whatever its attempts.' })
      .addCallback((result) => {
        for (const tally of this.calls.values()) result.observe(tally.count, tally.attributes);
      });
    meter
      .createObservableCounter(MetricNames.attempts, { ...int, unit: '{attempt}', description: 'Attempts that reached the dependency; attempts / calls is the load multiplier.' })
      .addCallback((result) => {
        for (const tally of this.attempts.values()) result.observe(tally.count, tally.attributes);
      });
    this.rejections = meter.createCounter(MetricNames.rejections, { ...int, unit: '{call}', description: 'Refusals by a guard of this process, by reason.' });
    this.hedges = meter.createCounter(MetricNames.hedges, { ...int, unit: '{attempt}', description: 'Hedged attempts started.' });
    this.stalls = meter.createCounter(MetricNames.stalls, { ...int, unit: '{attempt}', description: 'Attempts ended because their data stalled.' });
    this.streamResumed = meter.createCounter(MetricNames.streamResumed, { ...int, unit: '{stream}', description: 'Streams resumed after a mid-stream failure.' });
    this.configReloads = meter.createCounter(MetricNames.configReloads, { ...int, unit: '{reload}', description: 'Config reloads, applied (reloaded) or refused (reloadFailed).' });
    this.duration = meter.createHistogram(MetricNames.callDuration, {
      unit: 'ms',
      description: 'Duration of a logical call, attempts, backoff and pauses included.',
      advice: { explicitBucketBoundaries: [...CALL_DURATION_BUCKETS_MS] },
    });
    meter
      .createObservableGauge(MetricNames.breakerState, { ...int, description: 'Breaker state: 0 closed, 1 recovering, 2 half-open, 3 open, 4 isolated.' })
      .addCallback((result) => this.observeEach(result, (policy) => {
        const breaker = policy.breaker();
        return breaker === undefined ? undefined : BREAKER_STATE_VALUES[breaker.state];
      }));
    meter
      .createObservableGauge(MetricNames.budgetUtilization, { unit: '1', description: 'Retry-budget utilization: 0 full bucket, 1 empty (retries refused).' })
      .addCallback((result) => this.observeEach(result, (policy) => policy.bucket()?.utilization));
  }

  /** The shared calls tally of `attributes` (one per distinct attribute set). */
  callTally(attributes: Attributes): Tally {
    return tallyOf(this.calls, attributes);
  }

  /** The shared attempts tally of `attributes`. */
  attemptTally(attributes: Attributes): Tally {
    return tallyOf(this.attempts, attributes);
  }

  /**
   * Makes the gauges report `policy`, replacing an earlier instance of the same name, host and service
   * (so what is held is bounded by the distinct names, and is the instance that actually runs).
   */
  observe(policy: ExecutablePolicy, attributes: Attributes): void {
    if (policy.name === '') return;
    this.observed.set(JSON.stringify(attributes), { policy, attributes });
  }

  private observeEach(result: ObservableResult, read: (policy: ExecutablePolicy) => number | undefined): void {
    for (const entry of this.observed.values()) {
      const value = read(entry.policy);
      if (value !== undefined) result.observe(value, entry.attributes);
    }
  }
}

function tallyOf(tallies: Map<string, Tally>, attributes: Attributes): Tally {
  const key = JSON.stringify(attributes);
  let tally = tallies.get(key);
  if (tally === undefined) {
    tally = new Tally(Object.freeze(attributes));
    tallies.set(key, tally);
  }
  return tally;
}

/** The span of one logical call, found by the listener through the call's async context. */
class CallSpan {
  terminal = false;
  ended = false;
  constructor(
    readonly span: Span,
    readonly policy: string,
  ) {}
}

const callStore = new AsyncLocalStorage<CallSpan>();
const instrumentsByProvider = new WeakMap<MeterProvider, Instruments>();

function runInStore<T>(state: CallSpan, call: () => Promise<T>): Promise<T> {
  return callStore.run(state, call);
}

/**
 * OpenTelemetry recording for policies (DESIGN §7, issue 5): metrics through one meter named
 * `nresilience` (instruments created once per meter provider), and one span per logical call through
 * the tracer `nresilience`, a child of the caller's active context, with attempts, retries and
 * refusals as span events and status error on failure. Use {@link withTelemetry} or
 * `policy.withTelemetry()`; `ResilienceModule` attaches it to registered policies by itself.
 */
export class ResilienceTelemetry {
  private readonly instruments: Instruments;
  private readonly tracer: Tracer;

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
    this.tracer = (tracerProvider ?? trace).getTracer(INSTRUMENTATION_NAME);
  }

  /**
   * `policy` with metrics (a listener added with `withListener` semantics) and, unless
   * `traces: false`, a span per call (a call wrapper around any it already has). The gauges observe
   * the returned policy (named policies only).
   */
  instrument(policy: Policy, options: Pick<TelemetryOptions, 'host' | 'service' | 'traces'> = {}): Policy {
    const { host, service } = options;
    // The wrapper sees the instance that runs each call: the gauges follow it even when the policy is
    // derived again afterwards (`withListener`, `withLogging`, `with`), each with its own state.
    const mine = this.wrapper(host, service, options.traces !== false);
    const existing = policy.options.around;
    const around: CallWrapper = existing === undefined ? mine : (call, running) => existing(() => mine(call, running), running);
    const instrumented = policy.with({ around }).withListener(this.listener(host, service));
    this.instruments.observe(instrumented, baseAttributes(instrumented.name, host, service));
    return instrumented;
  }

  /** Counts one config reload by outcome (`nresilience.config.reloads`; rare, so a plain counter). */
  recordReload(outcome: 'reloaded' | 'reloadFailed'): void {
    this.instruments.configReloads.add(1, { [TelemetryAttributes.outcome]: outcome });
  }

  /**
   * The metrics-and-span-events listener alone (for `withListener` on a policy whose calls are
   * wrapped elsewhere, or metrics without spans).
   */
  listener(host?: string, service?: string): CallEventListener {
    const instruments = this.instruments;
    let last: AttributeSets | undefined;
    const sets = new Map<string, AttributeSets>();
    const attributesOf = (policy: string): AttributeSets => {
      if (last !== undefined && last.policy === policy) return last;
      let set = sets.get(policy);
      if (set === undefined) {
        set = new AttributeSets(policy, host, service, instruments);
        sets.set(policy, set);
      }
      last = set;
      return set;
    };
    return (event: CallEvent) => {
      const attributes = attributesOf(event.policy);
      switch (event.kind) {
        case 'attempt':
          attributes.attempt(event.verdict ?? 'unknown').count++;
          if (event.error === 'AttemptStalledError') instruments.stalls.add(1, attributes.base);
          break;
        case 'rejected':
          instruments.rejections.add(1, attributes.rejection(event.reason ?? 'rejected'));
          break;
        case 'rejectedByQuota':
          instruments.rejections.add(1, attributes.rejection('quota'));
          break;
        case 'hedged':
          instruments.hedges.add(1, attributes.base);
          break;
        case 'streamResumed':
          instruments.streamResumed.add(1, attributes.base);
          break;
      }
      if (event.isTerminal) {
        const call = attributes.call(event.kind, event.reason ?? event.kind);
        call.count++;
        instruments.duration.record(event.duration, call.attributes);
      }
      const state = callStore.getStore();
      if (state !== undefined && state.policy === event.policy) addSpanEvent(state, event);
    };
  }

  private wrapper(host: string | undefined, service: string | undefined, traces: boolean): CallWrapper {
    const tracer = this.tracer;
    const instruments = this.instruments;
    let lastPolicy: ExecutablePolicy | undefined;
    let base: Attributes = {};
    return <T>(call: () => Promise<T>, policy: ExecutablePolicy): Promise<T> => {
      if (policy !== lastPolicy) {
        lastPolicy = policy;
        base = baseAttributes(policy.name, host, service);
        instruments.observe(policy, base);
      }
      if (!traces) return call();
      let span: Span;
      let scope: Context;
      try {
        const parent = context.active();
        span = tracer.startSpan(policy.name === '' ? INSTRUMENTATION_NAME : `${INSTRUMENTATION_NAME} ${policy.name}`, { kind: SpanKind.INTERNAL, attributes: base }, parent);
        if (!span.isRecording()) {
          span.end();
          return call();
        }
        span.setAttribute(TelemetryAttributes.criticality, Ambient.criticality());
        scope = trace.setSpan(parent, span);
      } catch {
        // Telemetry never changes a call's outcome: a failing tracer only loses the span.
        return call();
      }
      const state = new CallSpan(span, policy.name);
      return context.with(scope, runInStore<T>, undefined, state, call).then(
        (value) => {
          state.ended = true;
          span.end();
          return value;
        },
        (error: unknown) => {
          if (!state.terminal) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : typeof error });
          state.ended = true;
          span.end();
          throw error;
        },
      );
    };
  }
}

function addSpanEvent(state: CallSpan, event: CallEvent): void {
  // Async work started inside a call (a timer) may outlive its span: its events have no span to join.
  if (state.ended) return;
  const span = state.span;
  const A = TelemetryAttributes;
  switch (event.kind) {
    case 'attempt': {
      const attributes: Attributes = { [A.attempt]: event.attempt, [A.outcome]: event.verdict, [A.duration]: event.duration };
      if (event.error !== undefined) attributes[A.errorType] = event.error;
      span.addEvent('attempt', attributes);
      break;
    }
    case 'retrying':
      span.addEvent('retrying', { [A.attempt]: event.attempt, [A.outcome]: event.verdict, [A.delay]: event.delay });
      break;
    case 'succeeded':
    case 'failed':
      break;
    default: {
      const attributes: Attributes = {};
      if (event.attempt > 0) attributes[A.attempt] = event.attempt;
      if (event.reason !== undefined) attributes[A.reason] = event.reason;
      if (event.delay > 0) attributes[A.delay] = event.delay;
      if (event.error !== undefined) attributes[A.errorType] = event.error;
      span.addEvent(event.kind, attributes);
    }
  }
  if (event.isTerminal) {
    state.terminal = true;
    span.setAttributes({ [A.outcome]: event.kind, [A.reason]: event.reason ?? event.kind, [A.attempt]: event.attempt });
    if (event.kind !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: event.reason ?? event.kind });
  }
}

/**
 * `policy` with OpenTelemetry metrics and spans attached (see {@link ResilienceTelemetry}). The
 * listener is added (`withListener` semantics: listeners and logging already attached keep working);
 * `policy.with({ onEvent })` afterwards replaces it and removes the spans too. Each call attaches
 * once more, so attach once.
 *
 * ```ts
 * const payments = withTelemetry(Resilience.http.with({ name: 'payments' }), { host: 'pay.example.com' });
 * ```
 */
export function withTelemetry(policy: Policy, options: TelemetryOptions = {}): Policy {
  return new ResilienceTelemetry(options.meterProvider, options.tracerProvider).instrument(policy, options);
}
