import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Injectable, type LoggerService, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  FakeClock,
  InjectPolicy,
  LogSampling,
  PolicyHandle,
  PolicyRegistry,
  RESILIENCE_INSTRUMENTATION,
  ResilienceConfigError,
  ResilienceModule,
  type ResilienceModuleOptions,
  Resilient,
} from '../lib/nest/index.js';
import type { PolicyInstrumentation } from '../lib/nest/resilience-instrumentation.js';

/** A Nest logger keeping `level context message` lines. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown, context?: string): void {
    this.lines.push(`log ${context} ${String(message)}`);
  }
  warn(message: unknown, context?: string): void {
    this.lines.push(`warn ${context} ${String(message)}`);
  }
  error(message: unknown, context?: string): void {
    this.lines.push(`error ${context} ${String(message)}`);
  }
  debug(message: unknown, context?: string): void {
    this.lines.push(`debug ${context} ${String(message)}`);
  }
  verbose(message: unknown, context?: string): void {
    this.lines.push(`verbose ${context} ${String(message)}`);
  }
  /** Lines written by the resilience loggers. */
  resilience(): string[] {
    return this.lines.filter((line) => line.includes(' NResilience.'));
  }
}

class TransientError extends Error {
  override name = 'TransientError';
}

let failuresLeft = 0;

@Injectable()
class PaymentsClient {
  constructor(@InjectPolicy('payments') readonly payments: PolicyHandle) {}

  @Resilient('ledger')
  async post(id: string): Promise<string> {
    if (failuresLeft > 0) {
      failuresLeft--;
      throw new TransientError(`ledger ${id} down`);
    }
    return `posted ${id}`;
  }
}

// A fresh OpenTelemetry SDK per test (in-memory exporters; metrics read on demand).
let metricExporter: InMemoryMetricExporter;
let reader: PeriodicExportingMetricReader;
let meterProvider: MeterProvider;
let spanExporter: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;
const contextManager = new AsyncLocalStorageContextManager();

async function counter(name: string, where: Record<string, string> = {}): Promise<number> {
  metricExporter.reset();
  await reader.forceFlush();
  const metric = metricExporter
    .getMetrics()
    .at(-1)
    ?.scopeMetrics.flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? [])
    .filter((p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + (p.value as number), 0);
}

let clock: FakeClock;
let logger: CapturingLogger;
let moduleRef: TestingModule | undefined;

async function boot(options: Partial<ResilienceModuleOptions>): Promise<TestingModule> {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        policies: {
          payments: { attempts: 2, backoff: { type: 'none' } },
          ledger: { attempts: 3, backoff: { type: 'none' } },
        },
        clock,
        telemetry: { meterProvider, tracerProvider },
        ...options,
      }),
    ],
    providers: [PaymentsClient],
  })
  class AppModule {}
  moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(logger)
    .compile();
  await moduleRef.init();
  return moduleRef;
}

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  clock = new FakeClock();
  logger = new CapturingLogger();
  failuresLeft = 0;
  metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  meterProvider = new MeterProvider({ readers: [reader] });
  spanExporter = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spanExporter)],
  });
});
afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

describe('ResilienceModule attaches telemetry and logging to registered policies', () => {
  it('metrics and one span per call for @InjectPolicy handles and @Resilient methods; verbose logs under NResilience.<name>', async () => {
    const app = await boot({ logging: 'verbose' });
    const client = app.get(PaymentsClient);

    await expect(client.payments.run(() => 'charged')).resolves.toBe('charged');
    failuresLeft = 1;
    await expect(client.post('order-17')).resolves.toBe('posted order-17');
    await expect(client.post('order-18')).resolves.toBe('posted order-18');

    expect(await counter('nresilience.calls', { 'nresilience.policy': 'payments' })).toBe(1);
    expect(await counter('nresilience.calls', { 'nresilience.policy': 'ledger' })).toBe(2);
    expect(await counter('nresilience.attempts', { 'nresilience.policy': 'ledger' })).toBe(3);
    expect(spanExporter.getFinishedSpans().map((s) => s.name)).toEqual([
      'nresilience payments',
      'nresilience ledger',
      'nresilience ledger',
    ]);
    expect(logger.resilience()).toEqual([
      'log NResilience.payments [payments] Attempt #1 Ok (0ms)',
      'log NResilience.payments [payments] Succeeded #1 (0ms)',
      'log NResilience.ledger [ledger] Attempt #1 Transient (0ms) TransientError',
      'log NResilience.ledger [ledger] Retrying #1 Transient (0ms) +0ms TransientError',
      'log NResilience.ledger [ledger] Attempt #2 Ok (0ms)',
      'log NResilience.ledger [ledger] Succeeded #2 (0ms)',
      'log NResilience.ledger [ledger] Attempt #1 Ok (0ms)',
      'log NResilience.ledger [ledger] Succeeded #1 (0ms)',
    ]);
  });

  it('the default profile is quiet when healthy with every level on, and warns when the breaker opens', async () => {
    const app = await boot({
      policies: {
        payments: { attempts: 2, backoff: { type: 'none' } },
        ledger: {
          attempts: 2,
          backoff: { type: 'none' },
          breaker: { consecutiveFailures: 2, failureRateFloor: 0 },
        },
      },
    });
    const client = app.get(PaymentsClient);
    await client.payments.run(() => 'charged');
    failuresLeft = 1;
    await expect(client.post('order-17')).resolves.toBe('posted order-17'); // a retried success
    expect(logger.resilience()).toEqual([]);
    failuresLeft = 2;
    await expect(client.post('order-18')).rejects.toThrow('ledger order-18 down'); // two failures in a row trip it (no rate floor: a fixed run)
    expect(logger.resilience()).toEqual([
      // The break is jittered; what it opened on is exact (two failures on the module's clock, no time between).
      expect.stringMatching(
        /^warn NResilience\.ledger \[ledger\] Breaker opened for \d+ms after 2 failures \(last: TransientError\)$/,
      ),
    ]);
  });

  it('telemetry: false and logging: off attach nothing', async () => {
    const app = await boot({ telemetry: false, logging: 'off' });
    await app.get(PaymentsClient).payments.run(() => 1);
    expect(await counter('nresilience.calls', { 'nresilience.policy': 'payments' })).toBe(0);
    expect(spanExporter.getFinishedSpans()).toHaveLength(0);
    expect(logger.resilience()).toEqual([]);
    expect(app.get(PolicyRegistry).get('payments').options.onEvent).toBeUndefined();
  });

  it("logging: 'verbose' with sampling: every 3rd traffic record, at log level", async () => {
    const app = await boot({
      telemetry: false,
      logging: { profile: 'verbose', sampling: LogSampling.oneIn(3) },
    });
    const payments = app.get(PaymentsClient).payments;
    for (let i = 0; i < 3; i++) await payments.run(() => i);
    // Records: attempt, succeeded × 3 calls; the 3rd and the 6th are kept.
    expect(logger.resilience()).toEqual([
      'log NResilience.payments [payments] Attempt #1 Ok (0ms)',
      'log NResilience.payments [payments] Succeeded #1 (0ms)',
    ]);
  });

  it('a reload keeps telemetry, logging and the logging state pinned to the name', async () => {
    const app = await boot({
      telemetry: { meterProvider, tracerProvider, traces: false },
      logging: { profile: 'verbose', sampling: { oneIn: 3 } },
    });
    const registry = app.get(PolicyRegistry);
    const payments = app.get(PaymentsClient).payments;
    await payments.run(() => 1); // sampled records 1, 2
    registry.reload({ policies: { payments: { attempts: 3 }, ledger: {} } });
    await payments.run(() => 2); // records 3 (kept), 4
    expect(logger.resilience()).toEqual([
      'log NResilience.config config reloaded (api): payments, ledger',
      'log NResilience.payments [payments] Attempt #1 Ok (0ms)',
    ]);
    expect(await counter('nresilience.calls', { 'nresilience.policy': 'payments' })).toBe(2);
    expect(spanExporter.getFinishedSpans()).toHaveLength(0);
  });

  it('reloads are counted by outcome; a refused one is logged once at warn with every problem', async () => {
    const app = await boot({});
    const registry = app.get(PolicyRegistry);
    registry.reload({ policies: { payments: { attempts: 3 }, ledger: {} } });
    expect(() => registry.reload({ policies: { payments: { attempts: 0 }, ledger: {} } })).toThrow(
      ResilienceConfigError,
    );
    expect(await counter('nresilience.config.reloads', { 'nresilience.outcome': 'reloaded' })).toBe(
      1,
    );
    expect(
      await counter('nresilience.config.reloads', { 'nresilience.outcome': 'reloadFailed' }),
    ).toBe(1);
    expect(logger.lines.filter((line) => line.includes(' NResilience.config '))).toEqual([
      'log NResilience.config config reloaded (api): payments, ledger',
      'warn NResilience.config config reload (api) refused, the previous config stays in force: Invalid resilience config (1 problem):\n  - policies.payments.attempts: 0 is invalid: must be an integer >= 1 (total attempts, including the first), at most 100',
    ]);
  });

  it('withListener on a registered policy keeps both; with({ onEvent }) turns both off', async () => {
    const app = await boot({ logging: 'verbose' });
    const registered = app.get(PolicyRegistry).get('payments');
    const kinds: string[] = [];
    await registered.withListener((e) => kinds.push(e.kind)).run(() => 1);
    expect(kinds).toEqual(['attempt', 'succeeded']);
    expect(await counter('nresilience.calls', { 'nresilience.policy': 'payments' })).toBe(1);
    expect(logger.resilience()).toHaveLength(2);
    await registered.with({ onEvent: (e) => kinds.push(e.kind) }).run(() => 1);
    expect(await counter('nresilience.calls', { 'nresilience.policy': 'payments' })).toBe(1);
    expect(logger.resilience()).toHaveLength(2);
    expect(spanExporter.getFinishedSpans()).toHaveLength(1);
  });

  it('invalid telemetry or logging options stop the application with the path, the value and the rule', async () => {
    const error = await boot({ logging: 'loud' as never, telemetry: 3 as never }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResilienceConfigError);
    const message = (error as Error).message;
    expect(message).toContain(
      "logging: \"loud\" is invalid: must be 'off', 'default' or 'verbose'",
    );
    expect(message).toContain('telemetry: 3 is invalid');
  });

  it('the instrumentation provider reports OpenTelemetry as attached when @opentelemetry/api is installed', async () => {
    const app = await boot({ logging: 'off' });
    expect(app.get<PolicyInstrumentation>(RESILIENCE_INSTRUMENTATION).telemetryEnabled).toBe(true);
  });
});
