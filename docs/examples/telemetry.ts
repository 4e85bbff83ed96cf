// docs/telemetry.md; test/docs-examples.e2e-spec.ts runs it.
// #region telemetry
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Resilience } from '../../lib/core/index.js';
import { MetricNames, withTelemetry } from '../../lib/telemetry/index.js';

// Any reader works; this one is read on demand (a Prometheus or OTLP exporter in an application).
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}
const reader = new OnDemandReader();
const meterProvider = new MeterProvider({ readers: [reader] });

const payments = withTelemetry(Resilience.default.with({ name: 'payments' }), {
  meterProvider,
  traces: false,
});
// #endregion telemetry

/** Three calls, one of which needs a retry: calls 3, attempts 4. */
export async function countCalls() {
  // #region telemetry
  let failures = 1; // the first call fails once, then succeeds on its retry
  for (let i = 0; i < 3; i++) {
    await payments.run(async () => {
      if (failures-- > 0) throw new Error('flaky');
      return 'ok';
    });
  }
  const { resourceMetrics } = await reader.collect();
  const sums = Object.fromEntries(
    resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .map((m) => [
        m.descriptor.name,
        m.dataPoints.reduce((n, p) => n + (typeof p.value === 'number' ? p.value : 0), 0),
      ]),
  );
  // sums[MetricNames.calls] → 3, sums[MetricNames.attempts] → 4: attempts ÷ calls is the retry rate
  // #endregion telemetry
  await meterProvider.shutdown();
  return { calls: sums[MetricNames.calls], attempts: sums[MetricNames.attempts] };
}
