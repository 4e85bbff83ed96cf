/**
 * `--metrics`: OpenTelemetry set up the way applications do it — `NodeSDK` from
 * `@opentelemetry/sdk-node` (0.2xx, SDK 2.x, which runs on Node 20) with the Prometheus exporter —
 * started before the app, so `ResilienceModule` instruments the `payments` policy on its own. The
 * demo serves `/metrics` while it runs and reads its totals back by scraping that endpoint:
 * `nresilience_calls_total`, `nresilience_attempts_total`, their ratio next to the demo's own count,
 * refusals by reason, and the spans the SDK ended.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics, trace, context } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
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

/** One sample of the Prometheus text format: `name{label="value",…} number`. */
interface Sample {
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition (comments and blank lines skipped). */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (match === null) continue;
    const labels = new Map<string, string>();
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels.set(
        label[1]!,
        label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)),
      );
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The demo's OpenTelemetry: a started `NodeSDK` whose Prometheus exporter answers on `url`. */
export class DemoTelemetry {
  private readonly spans = new CountingSpanProcessor();
  // The exporter's request handler on a server of ours, bound to a free loopback port (the exporter's
  // own server defaults to 9464, which another process may hold).
  private readonly exporter = new PrometheusExporter({ preventServerStart: true });
  private readonly sdk = new NodeSDK({
    serviceName: 'storm-demo',
    metricReaders: [this.exporter],
    spanProcessors: [this.spans],
  });
  private readonly server: Server = createServer((request, response) => {
    if (request.url === '/metrics')
      return this.exporter.getMetricsRequestHandler(request, response);
    response.statusCode = 404;
    response.end();
  });

  private constructor() {}

  /** Starts the SDK (global providers, before the app is created) and the `/metrics` endpoint. */
  static async install(): Promise<DemoTelemetry> {
    const telemetry = new DemoTelemetry();
    telemetry.sdk.start();
    await new Promise<void>((resolve) => telemetry.server.listen(0, '127.0.0.1', resolve));
    return telemetry;
  }

  /** Where Prometheus (or `curl`) can scrape the demo while it runs. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/metrics`;
  }

  /** Scrapes `/metrics` now and returns the cumulative totals of the `payments` policy. */
  async totals(): Promise<OtelTotals> {
    const response = await fetch(this.url);
    if (!response.ok) throw new Error(`GET ${this.url} answered ${response.status}`);
    const samples = parsePrometheusText(await response.text()).filter(
      (sample) => sample.labels.get('nresilience_policy') === 'payments',
    );
    const sum = (name: string) =>
      samples
        .filter((sample) => sample.name === name)
        .reduce((total, sample) => total + sample.value, 0);
    const rejections = new Map<string, number>();
    for (const sample of samples.filter((s) => s.name === 'nresilience_rejections_total')) {
      const reason = sample.labels.get('nresilience_reason') ?? 'unknown';
      rejections.set(reason, (rejections.get(reason) ?? 0) + sample.value);
    }
    return {
      calls: sum('nresilience_calls_total'),
      attempts: sum('nresilience_attempts_total'),
      rejections,
      spans: this.spans.ended,
    };
  }

  /** Stops the endpoint and the SDK and unregisters the global providers. */
  async shutdown(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
    await this.sdk.shutdown();
    metrics.disable();
    trace.disable();
    context.disable();
  }
}

/** `after - before`, per counter: one run's share of cumulative totals. */
export function difference(after: OtelTotals, before: OtelTotals | undefined): OtelTotals {
  const rejections = new Map<string, number>();
  for (const [reason, n] of after.rejections)
    rejections.set(reason, n - (before?.rejections.get(reason) ?? 0));
  return {
    calls: after.calls - (before?.calls ?? 0),
    attempts: after.attempts - (before?.attempts ?? 0),
    rejections,
    spans: after.spans - (before?.spans ?? 0),
  };
}

/** The closing OpenTelemetry table: the SDK's counters per run, attempts/calls beside the demo's own ratio. */
export function otelTable(
  on: OtelTotals,
  off: OtelTotals,
  summaries: { on: RunSummary; off: RunSummary },
): string {
  const reasons = [...new Set([...on.rejections.keys(), ...off.rejections.keys()])].sort();
  const rows: [string, string, string][] = [
    ['scraped from /metrics (NodeSDK)', 'budget on', 'budget off'],
    ['nresilience_calls_total', String(on.calls), String(off.calls)],
    ['nresilience_attempts_total', String(on.attempts), String(off.attempts)],
    ['attempts / calls', ratio(on.attempts, on.calls), ratio(off.attempts, off.calls)],
    [
      "  demo's own count (dependency / calls)",
      `${summaries.on.loadMultiplier.toFixed(2)}x`,
      `${summaries.off.loadMultiplier.toFixed(2)}x`,
    ],
    // One row per reason, indented under the metric's name so the label fits the first column.
    ...(reasons.length > 0
      ? [['nresilience_rejections_total', '', ''] as [string, string, string]]
      : []),
    ...reasons.map((reason): [string, string, string] => [
      `  reason ${reason}`,
      String(on.rejections.get(reason) ?? 0),
      String(off.rejections.get(reason) ?? 0),
    ]),
    ['spans (one per call)', String(on.spans), String(off.spans)],
  ];
  return rows
    .map(([name, a, b]) => `${name.padEnd(38)}${a.padStart(12)}${b.padStart(12)}`)
    .join('\n');
}

function ratio(a: number, b: number): string {
  return b === 0 ? '-' : `${(a / b).toFixed(2)}x`;
}
