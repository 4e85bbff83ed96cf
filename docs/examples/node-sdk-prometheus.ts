// The README's "Metrics and dashboards" setup; test/docs-metrics.e2e-spec.ts starts it and scrapes it.
// #region node-sdk
import { NodeSDK } from '@opentelemetry/sdk-node';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
// #endregion node-sdk

/** Starts OpenTelemetry as an application does before `NestFactory.create`; returns the SDK. */
export function startTelemetry(): NodeSDK {
  // #region node-sdk

  // Port 9464 unless OTEL_EXPORTER_PROMETHEUS_PORT says otherwise: GET http://localhost:9464/metrics
  const sdk = new NodeSDK({ serviceName: 'checkout', metricReaders: [new PrometheusExporter()] });
  sdk.start();
  // #endregion node-sdk
  return sdk;
}
