/**
 * Cost of observation on the success path (issue 5): `Resilience.default` with OpenTelemetry metrics
 * and spans and the logging listener attached, against the same policy without them and a raw
 * awaited call, same process, same run. Run on demand: `npm run bench`. Not part of `npm test`.
 *
 * The SDK is real (sdk-metrics MeterProvider with a reader, sdk-trace-base tracer provider sampling
 * every span, AsyncLocalStorage context manager); spans go to a processor that drops them, so memory
 * stays flat. Logging goes through Nest's `Logger` with the application at `log`/`warn`/`error` (a
 * production setting): healthy records are at `verbose`, so they are counted but not formatted.
 * One row uses a tracer that samples nothing (what most calls see under ratio sampling). Three rows
 * are the SDK's own floor: the same signals written by hand around the bare work, no policy — the
 * metrics, the metrics with a bare span made current, and the metrics with a span carrying what our
 * span carries (its attributes and the attempt event).
 */
import { Logger } from '@nestjs/common';
import { SpanKind, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  NoopSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { measure } from './harness.js';
import { NestResilienceLogger, Resilience, withLogging } from '@nresilience/nestjs';
import { MetricNames, TelemetryAttributes, withTelemetry } from '@nresilience/nestjs/telemetry';

const work = async () => 1;

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] });
// A tracer that samples nothing: what most calls see under ratio sampling.
const unsampledTracerProvider = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
Logger.overrideLogger(['log', 'warn', 'error']);

const plain = Resilience.default.with({ name: 'bench' });
const metricsOnly = withTelemetry(plain, { meterProvider, tracerProvider, traces: false });
const telemetry = withTelemetry(plain, { meterProvider, tracerProvider });
const unsampled = withTelemetry(plain, { meterProvider, tracerProvider: unsampledTracerProvider });
const observed = withLogging(telemetry, new NestResilienceLogger('bench'));
const loggingOnly = withLogging(plain, new NestResilienceLogger('bench'));

// The OpenTelemetry SDK's own floor: the same signals written by hand straight to the SDK, around
// the bare work — one histogram record of the duration, the calls and attempts counters, and (second
// row) one span made current for the work. Attributes are built once, as ours are.
const floorMeter = meterProvider.getMeter('bench-floor');
const floorDuration = floorMeter.createHistogram('floor.call.duration', { unit: 's' });
const floorCalls = floorMeter.createCounter('floor.calls');
const floorAttempts = floorMeter.createCounter('floor.attempts');
const floorAttributes = Object.freeze({
  'nresilience.policy': 'bench',
  'nresilience.outcome': 'succeeded',
});
const floorTracer = tracerProvider.getTracer('bench-floor');
async function floorMetrics(): Promise<number> {
  const start = performance.now();
  const value = await work();
  floorAttempts.add(1, floorAttributes);
  floorCalls.add(1, floorAttributes);
  floorDuration.record((performance.now() - start) / 1000, floorAttributes);
  return value;
}
async function floorMetricsAndSpan(): Promise<number> {
  const start = performance.now();
  const span = floorTracer.startSpan('bench');
  const value = await context.with(trace.setSpan(context.active(), span), work);
  floorAttempts.add(1, floorAttributes);
  floorCalls.add(1, floorAttributes);
  floorDuration.record((performance.now() - start) / 1000, floorAttributes);
  span.end();
  return value;
}
// The floor of the span our observer writes: the same content written by hand — the policy
// attribute at the start, the criticality, one `attempt` event with its number, verdict and
// duration, the outcome, reason and attempt count at the end — so the two rows differ by the
// policy alone, not by what the span carries.
const A = TelemetryAttributes;
const spanStartAttributes = Object.freeze({ [A.policy]: 'bench' });
async function floorMetricsAndFullSpan(): Promise<number> {
  const start = performance.now();
  const parent = context.active();
  const span = floorTracer.startSpan(
    'nresilience bench',
    { kind: SpanKind.INTERNAL, attributes: spanStartAttributes },
    parent,
  );
  span.setAttribute(A.criticality, 'critical');
  const value = await context.with(trace.setSpan(parent, span), work);
  const duration = performance.now() - start;
  span.addEvent('attempt', { [A.attempt]: 1, [A.outcome]: 'Ok', [A.duration]: duration });
  floorAttempts.add(1, floorAttributes);
  floorCalls.add(1, floorAttributes);
  floorDuration.record(duration / 1000, floorAttributes);
  span.setAttributes({ [A.outcome]: 'succeeded', [A.reason]: 'succeeded', [A.attempt]: 1 });
  span.end();
  return value;
}

await measure(
  'Telemetry cost',
  [
    ['raw await', () => work()],
    ['Resilience.default, nothing attached', () => plain.run(work)],
    ['+ logging (Nest Logger, verbose off)', () => loggingOnly.run(work)],
    ['+ OpenTelemetry metrics', () => metricsOnly.run(work)],
    ['+ OpenTelemetry metrics, span not sampled', () => unsampled.run(work)],
    ['+ OpenTelemetry metrics and spans', () => telemetry.run(work)],
    ['+ metrics, spans and logging (the ResilienceModule default)', () => observed.run(work)],
    [
      'OpenTelemetry SDK floor: the work + histogram record + 2 counters, by hand',
      () => floorMetrics(),
    ],
    [
      'OpenTelemetry SDK floor: the same + one span made current, by hand',
      () => floorMetricsAndSpan(),
    ],
    [
      'OpenTelemetry SDK floor: the same + the span content ours writes (attributes, attempt event)',
      () => floorMetricsAndFullSpan(),
    ],
  ],
  { index: 1, label: 'without' },
);

// The counters really counted: attempts / calls of the instrumented tasks.
await reader.forceFlush();
const metrics =
  exporter
    .getMetrics()
    .at(-1)
    ?.scopeMetrics.flatMap((scope) => scope.metrics) ?? [];
const total = (name: string) =>
  metrics
    .find((m) => m.descriptor.name === name)
    ?.dataPoints.reduce((sum, p) => sum + (p.value as number), 0) ?? 0;
console.log(`recorded: ${total(MetricNames.calls)} calls, ${total(MetricNames.attempts)} attempts`);
await meterProvider.shutdown();
await tracerProvider.shutdown();
await unsampledTracerProvider.shutdown();
context.disable();
