import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Backoff, Resilience } from '../lib/core/index.js';
import { withTelemetry } from '../lib/telemetry/index.js';
import { DemoTelemetry, parsePrometheusText } from '../sample/01-storm-demo/otel-metrics.js';

/**
 * The storm demo's `--metrics` wiring: a started NodeSDK with the Prometheus exporter, `/metrics`
 * served on loopback, totals read back by scraping it (not from the SDK's memory).
 */
describe('storm demo --metrics (NodeSDK + Prometheus exporter)', () => {
  let telemetry: DemoTelemetry;
  beforeAll(async () => {
    telemetry = await DemoTelemetry.install();
  });
  afterAll(async () => {
    await telemetry.shutdown();
  });

  it('counts calls and attempts of the payments policy from the scraped /metrics text', async () => {
    // Instrumented through the global providers NodeSDK registered, as ResilienceModule does.
    const payments = withTelemetry(
      Resilience.default.with({ name: 'payments', backoff: Backoff.none }),
    );
    const other = withTelemetry(Resilience.default.with({ name: 'ledger' }));
    await payments.run(() => 'ok');
    let failures = 1;
    await payments.run(() => {
      if (failures-- > 0) throw new Error('blip');
      return 'ok';
    });
    await other.run(() => 'ok');

    const totals = await telemetry.totals();
    expect([totals.calls, totals.attempts, totals.spans]).toEqual([2, 3, 3]);
    const text = await (await fetch(telemetry.url)).text();
    expect(text).toContain('# TYPE nresilience_calls_total counter');
    expect(text).toContain('nresilience_calls_total{nresilience_policy="ledger"');
  });

  it('parses labels, escaped quotes and values of the text format', () => {
    const samples = parsePrometheusText(
      '# TYPE x_total counter\nx_total{a="1",b="say \\"hi\\""} 4\n\ny 2.5\n',
    );
    expect(samples.map((s) => [s.name, Object.fromEntries(s.labels), s.value])).toEqual([
      ['x_total', { a: '1', b: 'say "hi"' }, 4],
      ['y', {}, 2.5],
    ]);
  });
});
