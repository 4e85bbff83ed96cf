/**
 * `--metrics`: a real OpenTelemetry SDK (sdk-metrics 2.x and sdk-trace-base 2.x, which run on Node 20)
 * registered globally before the app starts, so `ResilienceModule` instruments the `payments` policy
 * on its own. At the end the demo prints what the SDK collected for each run: `nresilience.calls`,
 * `nresilience.attempts`, their ratio next to the demo's own count, refusals by reason, and spans.
 */
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { RunSummary } from './report.js';

/** What the SDK had collected at one moment (cumulative since the start). */
export interface OtelTotals {
  readonly calls: number;
  readonly attempts: number;
  readonly rejections: ReadonlyMap<string, number>;
  readonly spans: number;
}

/** Counts the spans the SDK ended (the demo has no trace backend; the count is the point). */
class CountingSpanProcessor implements SpanProcessor {
  ended = 0;
  onStart(): void {}
  onEnd(_span: ReadableSpan): void {
    this.ended++;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The demo's OpenTelemetry SDK: global meter and tracer providers, AsyncLocalStorage context. */
export class DemoTelemetry {
  private readonly exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Collected on demand (forceFlush); the interval only has to be longer than the demo.
  private readonly reader = new PeriodicExportingMetricReader({ exporter: this.exporter, exportIntervalMillis: 3_600_000 });
  private readonly meterProvider = new MeterProvider({ readers: [this.reader] });
  private readonly spans = new CountingSpanProcessor();
  private readonly tracerProvider = new BasicTracerProvider({ spanProcessors: [this.spans] });
  private readonly contextManager = new AsyncLocalStorageContextManager();

  /** Registers the providers globally (before the app is created, as OpenTelemetry asks). */
  static install(): DemoTelemetry {
    const sdk = new DemoTelemetry();
    context.setGlobalContextManager(sdk.contextManager.enable());
    metrics.setGlobalMeterProvider(sdk.meterProvider);
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    return sdk;
  }

  /** Collects now and returns the cumulative totals of the `payments` policy. */
  async totals(): Promise<OtelTotals> {
    this.exporter.reset();
    await this.reader.forceFlush();
    const all = this.exporter.getMetrics().at(-1)?.scopeMetrics.flatMap((scope) => scope.metrics) ?? [];
    const points = (name: string) =>
      (all.find((m) => m.descriptor.name === name)?.dataPoints ?? []).filter((p) => p.attributes['nresilience.policy'] === 'payments');
    const sum = (name: string) => points(name).reduce((total, p) => total + (p.value as number), 0);
    const rejections = new Map<string, number>();
    for (const p of points('nresilience.rejections')) rejections.set(String(p.attributes['nresilience.reason']), p.value as number);
    return { calls: sum('nresilience.calls'), attempts: sum('nresilience.attempts'), rejections, spans: this.spans.ended };
  }

  /** Flushes and unregisters everything. */
  async shutdown(): Promise<void> {
    await this.meterProvider.shutdown();
    await this.tracerProvider.shutdown();
    metrics.disable();
    trace.disable();
    context.disable();
  }
}

/** `after - before`, per counter: one run's share of cumulative totals. */
export function difference(after: OtelTotals, before: OtelTotals | undefined): OtelTotals {
  const rejections = new Map<string, number>();
  for (const [reason, n] of after.rejections) rejections.set(reason, n - (before?.rejections.get(reason) ?? 0));
  return {
    calls: after.calls - (before?.calls ?? 0),
    attempts: after.attempts - (before?.attempts ?? 0),
    rejections,
    spans: after.spans - (before?.spans ?? 0),
  };
}

/** The closing OpenTelemetry table: the SDK's counters per run, attempts/calls beside the demo's own ratio. */
export function otelTable(on: OtelTotals, off: OtelTotals, summaries: { on: RunSummary; off: RunSummary }): string {
  const reasons = [...new Set([...on.rejections.keys(), ...off.rejections.keys()])].sort();
  const rows: [string, string, string][] = [
    ['OpenTelemetry SDK (meter nresilience)', 'budget on', 'budget off'],
    ['nresilience.calls', String(on.calls), String(off.calls)],
    ['nresilience.attempts', String(on.attempts), String(off.attempts)],
    ['attempts / calls', ratio(on.attempts, on.calls), ratio(off.attempts, off.calls)],
    ["  demo's own count (dependency / calls)", `${summaries.on.loadMultiplier.toFixed(2)}x`, `${summaries.off.loadMultiplier.toFixed(2)}x`],
    ...reasons.map((reason): [string, string, string] => [`nresilience.rejections ${reason}`, String(on.rejections.get(reason) ?? 0), String(off.rejections.get(reason) ?? 0)]),
    ['spans (one per call)', String(on.spans), String(off.spans)],
  ];
  return rows.map(([name, a, b]) => `${name.padEnd(38)}${a.padStart(12)}${b.padStart(12)}`).join('\n');
}

function ratio(a: number, b: number): string {
  return b === 0 ? '-' : `${(a / b).toFixed(2)}x`;
}
