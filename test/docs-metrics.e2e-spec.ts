import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { Resilience } from '../lib/core/index.js';
import { withTelemetry } from '../lib/telemetry/index.js';
import { startTelemetry } from '../docs/examples/node-sdk-prometheus.js';

/** A port nothing listens on right now (bound on 0, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// docs/telemetry.md's NodeSDK + Prometheus setup, started for real and scraped over loopback.
describe('docs/telemetry.md: metrics and dashboards', () => {
  let sdk: NodeSDK;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    process.env.OTEL_EXPORTER_PROMETHEUS_PORT = String(port);
    process.env.OTEL_TRACES_EXPORTER = 'none'; // as docs/telemetry.md says where nothing listens for OTLP
    url = `http://127.0.0.1:${port}/metrics`;
    sdk = startTelemetry();
  });
  afterAll(async () => {
    await sdk.shutdown();
    delete process.env.OTEL_EXPORTER_PROMETHEUS_PORT;
    delete process.env.OTEL_TRACES_EXPORTER;
  });

  it('serves the policy counters under the Prometheus names docs/telemetry.md lists', async () => {
    const payments = withTelemetry(Resilience.default.with({ name: 'payments' }));
    await payments.run(() => 'ok');
    const text = await (await fetch(url)).text();
    const lines = text.split('\n').filter((line) => line.includes('nresilience_policy="payments"'));
    expect(
      lines
        .find((line) => line.startsWith('nresilience_calls_total{'))
        ?.split(' ')
        .at(-1),
    ).toBe('1');
    expect(
      lines
        .find((line) => line.startsWith('nresilience_attempts_total{'))
        ?.split(' ')
        .at(-1),
    ).toBe('1');
    expect(lines.some((line) => line.startsWith('nresilience_call_duration_count{'))).toBe(true);
    expect(lines.some((line) => line.startsWith('nresilience_budget_utilization{'))).toBe(true);
  });
});
