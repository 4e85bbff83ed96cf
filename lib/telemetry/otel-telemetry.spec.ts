import { DiagLogLevel, context, diag, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  Ambient,
  AmbientCriticality,
  Backoff,
  Breaker,
  type CallEvent,
  Classifier,
  FakeClock,
  Hedge,
  HeldCall,
  Limit,
  PolicyScope,
  Resilience,
  RetryBudget,
  Verdict,
} from '../core/index.js';
import { HostPolicies } from '../http/host-policies.js';
import { Instruments } from './otel-instruments.js';
import { ServicePolicies } from '../grpc/service-policies.js';
import {
  BREAKER_STATE_VALUES,
  MetricNames,
  ResilienceTelemetry,
  TelemetryAttributes as A,
  withTelemetry,
} from './index.js';

/** A real OpenTelemetry SDK with in-memory exporters: metrics read on demand, spans exported as they end. */
class Sdk {
  readonly metricExporter: InMemoryMetricExporter;
  readonly reader: PeriodicExportingMetricReader;
  readonly meterProvider: MeterProvider;
  readonly spanExporter = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.spanExporter)],
  });

  /**
   * @param temporality the reader's: cumulative (what Prometheus reads), or delta, under which a
   *   gauge series the callback no longer observes is not exported (OpenTelemetry JS keeps
   *   exporting its last value under cumulative)
   */
  constructor(temporality = AggregationTemporality.CUMULATIVE) {
    this.metricExporter = new InMemoryMetricExporter(temporality);
    this.reader = new PeriodicExportingMetricReader({
      exporter: this.metricExporter,
      exportIntervalMillis: 3_600_000,
    });
    this.meterProvider = new MeterProvider({ readers: [this.reader] });
  }

  /** Every data point of `name` in the latest collection. */
  async points(name: string): Promise<DataPoint<number | Histogram>[]> {
    this.metricExporter.reset();
    await this.reader.forceFlush();
    const collected = this.metricExporter.getMetrics().at(-1);
    const metric = collected?.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<number | Histogram>[];
  }

  /** Sum of the counter `name` over the data points matching `where`. */
  async sum(name: string, where: Record<string, string> = {}): Promise<number> {
    const points = await this.points(name);
    return points
      .filter((p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v))
      .reduce((total, p) => total + (p.value as number), 0);
  }

  /** Number of distinct series (data points) across every nresilience metric. */
  async seriesCount(): Promise<number> {
    this.metricExporter.reset();
    await this.reader.forceFlush();
    const collected = this.metricExporter.getMetrics().at(-1);
    return (
      collected?.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .reduce((n, m) => n + m.dataPoints.length, 0) ?? 0
    );
  }

  get spans(): ReadableSpan[] {
    return this.spanExporter.getFinishedSpans();
  }

  async shutdown(): Promise<void> {
    await this.meterProvider.shutdown();
    await this.tracerProvider.shutdown();
  }
}

class TransientError extends Error {
  override name = 'TransientError';
}

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

let sdk: Sdk;
beforeEach(() => {
  sdk = new Sdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

function instrumented(name: string, changes: Parameters<typeof Resilience.default.with>[0] = {}) {
  return withTelemetry(Resilience.default.with({ name, backoff: Backoff.none, ...changes }), {
    meterProvider: sdk.meterProvider,
    tracerProvider: sdk.tracerProvider,
  });
}

describe('metrics', () => {
  it('a scripted run of 3 calls, one retried once: calls = 3, attempts = 4, one span per call', async () => {
    const policy = instrumented('payments');
    let failOnce = true;
    const script = [
      () => 'a',
      () => {
        if (failOnce) {
          failOnce = false;
          throw new TransientError('blip');
        }
        return 'b';
      },
      () => 'c',
    ];
    const results: string[] = [];
    for (const step of script) results.push(await policy.run(step));

    expect(results).toEqual(['a', 'b', 'c']);
    expect(await sdk.sum(MetricNames.calls)).toBe(3);
    expect(await sdk.sum(MetricNames.attempts)).toBe(4);
    expect(await sdk.sum(MetricNames.attempts, { [A.outcome]: 'Ok' })).toBe(3);
    expect(await sdk.sum(MetricNames.attempts, { [A.outcome]: 'Transient' })).toBe(1);
    expect(
      await sdk.sum(MetricNames.calls, {
        [A.policy]: 'payments',
        [A.outcome]: 'succeeded',
        [A.reason]: 'succeeded',
      }),
    ).toBe(3);
    expect(sdk.spans).toHaveLength(3);
    const durations = await sdk.points(MetricNames.callDuration);
    expect(durations).toHaveLength(1);
    expect((durations[0]!.value as Histogram).count).toBe(3);
  });

  it('failures and refusals: outcome and reason on calls, rejections by reason', async () => {
    const clock = new FakeClock();
    // A bucket of 10 tokens with no refill: the 11th retry is refused.
    const policy = instrumented('ledger', {
      clock,
      attempts: 2,
      budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }),
    });
    const fail = () => {
      throw new TransientError('down');
    };
    for (let i = 0; i < 12; i++) {
      const call = policy.tryRun(fail);
      await clock.runAll();
      await call;
    }
    expect(await sdk.sum(MetricNames.calls)).toBe(12);
    expect(
      await sdk.sum(MetricNames.calls, { [A.outcome]: 'failed', [A.reason]: 'attemptsExhausted' }),
    ).toBe(10);
    expect(
      await sdk.sum(MetricNames.calls, { [A.outcome]: 'rejected', [A.reason]: 'budgetExhausted' }),
    ).toBe(2);
    expect(
      await sdk.sum(MetricNames.rejections, {
        [A.policy]: 'ledger',
        [A.reason]: 'budgetExhausted',
      }),
    ).toBe(2);
    expect(await sdk.sum(MetricNames.attempts)).toBe(10 * 2 + 2);
  });

  it('an answer (a Permanent verdict: a 404 passed through, one thrown) is its own outcome, answered, not failed', async () => {
    const policy = instrumented('catalog', {
      attempts: 3,
      budget: RetryBudget.none,
      classifier: Classifier.of((outcome) =>
        outcome.ok
          ? outcome.value === 404
            ? Verdict.permanent
            : undefined
          : (outcome.error as Error).name === 'NotFound'
            ? Verdict.permanent
            : undefined,
      ),
    });
    const notFound = Object.assign(new Error('no such item'), { name: 'NotFound' });
    expect(await policy.run(() => 404)).toBe(404);
    await expect(policy.run(() => Promise.reject(notFound))).rejects.toBe(notFound);
    await policy.run(() => 200);
    expect(
      await sdk.sum(MetricNames.calls, { [A.outcome]: 'answered', [A.reason]: 'permanent' }),
    ).toBe(2);
    expect(await sdk.sum(MetricNames.calls, { [A.outcome]: 'failed' })).toBe(0);
    expect(await sdk.sum(MetricNames.calls, { [A.outcome]: 'succeeded' })).toBe(1);
    expect(await sdk.sum(MetricNames.attempts, { [A.outcome]: 'Permanent' })).toBe(2);
    const durations = await sdk.points(MetricNames.callDuration);
    expect(
      durations
        .filter((p) => p.attributes[A.outcome] === 'answered')
        .map((p) => (p.value as Histogram).count),
    ).toEqual([2]);
    const answered = sdk.spans.filter((span) => span.attributes[A.outcome] === 'answered');
    expect(answered.map((span) => [span.attributes[A.reason], span.status.code])).toEqual([
      ['permanent', 0],
      ['permanent', 0],
    ]);
  });

  it("a call the policy's fallback served is its own outcome, fallback, with the call's reason; one whose fallback threw keeps its kind", async () => {
    const clock = new FakeClock();
    let cacheEmpty = false;
    const policy = instrumented('quotes', {
      clock,
      attempts: 2,
      budget: RetryBudget.none,
      limit: Limit.concurrency(1),
      fallback: () => {
        if (cacheEmpty) throw Object.assign(new Error('no entry'), { name: 'CacheMissError' });
        return 'cached';
      },
    });
    const down = () => Promise.reject(new TransientError('down'));
    // Attempts exhausted: served three times, then the fallback throws twice.
    for (let i = 0; i < 3; i++) await expect(policy.run(down)).resolves.toBe('cached');
    cacheEmpty = true;
    for (let i = 0; i < 2; i++) await expect(policy.run(down)).rejects.toThrow('no entry');
    // Limited refusals (one slot, held): served, then the fallback throws, then served.
    let release!: (value: string) => void;
    const held = policy.run(() => new Promise<string>((resolve) => (release = resolve)));
    for (const empty of [false, true, false]) {
      cacheEmpty = empty;
      const refused = policy.run(() => 'unused').catch((error: Error) => error.name);
      await clock.advance(100); // the guarded pause before a refusal
      expect(await refused).toBe(empty ? 'CacheMissError' : 'cached');
    }
    release('fresh');
    expect(await held).toBe('fresh');

    const calls = (outcome: string, reason: string) =>
      sdk.sum(MetricNames.calls, { [A.outcome]: outcome, [A.reason]: reason });
    expect(await calls('fallback', 'attemptsExhausted')).toBe(3);
    expect(await calls('failed', 'attemptsExhausted')).toBe(2);
    expect(await calls('fallback', 'limited')).toBe(2);
    expect(await calls('rejected', 'limited')).toBe(1);
    expect(await calls('succeeded', 'succeeded')).toBe(1);
    expect(await sdk.sum(MetricNames.calls)).toBe(9);
    // Every refusal is still a refusal, whoever answered it.
    expect(await sdk.sum(MetricNames.rejections, { [A.reason]: 'limited' })).toBe(3);
    const durations = await sdk.points(MetricNames.callDuration);
    expect(
      durations
        .filter((p) => p.attributes[A.outcome] === 'fallback')
        .map((p) => [p.attributes[A.reason], (p.value as Histogram).count]),
    ).toEqual([
      ['attemptsExhausted', 3],
      ['limited', 2],
    ]);
    // Spans: served calls carry no error status; one whose fallback threw is an error.
    expect(
      sdk.spans.map((span) => [
        span.attributes[A.outcome],
        span.attributes[A.reason],
        span.attributes[A.fallback],
        span.status.code,
      ]),
    ).toEqual([
      ['fallback', 'attemptsExhausted', 'served', 0],
      ['fallback', 'attemptsExhausted', 'served', 0],
      ['fallback', 'attemptsExhausted', 'served', 0],
      ['failed', 'attemptsExhausted', 'failed', 2],
      ['failed', 'attemptsExhausted', 'failed', 2],
      ['fallback', 'limited', 'served', 0],
      ['rejected', 'limited', 'failed', 2],
      ['fallback', 'limited', 'served', 0],
      ['succeeded', 'succeeded', undefined, 0],
    ]);
  });

  it('a reason that ends in several outcomes keeps one calls series per (outcome, reason), however they alternate', () => {
    const instruments = new Instruments(sdk.meterProvider.getMeter('alternating'));
    const sets = instruments.setsOf('quotes', undefined, undefined);
    for (let i = 0; i < 50; i++) {
      sets.call('fallback', 'limited').count++;
      sets.call('rejected', 'limited').count++;
    }
    expect(sets.tallies.map((tally) => [tally.attributes[A.outcome], tally.count])).toEqual([
      ['fallback', 50],
      ['rejected', 50],
    ]);
  });

  it('counts every nested retry (a call that may retry while the inbound caller may retry too), on the nested_retries counter', async () => {
    const policy = instrumented('db', { attempts: 2, budget: RetryBudget.none });
    for (let i = 0; i < 5; i++)
      await Ambient.run({ nestedRetry: true }, () => policy.run(() => 'row'));
    await policy.run(() => 'row');
    expect(await sdk.sum(MetricNames.nestedRetries, { [A.policy]: 'db' })).toBe(5);
  });

  it('counts hedges started and the calls a hedge won, on the hedges and hedge_wins counters', async () => {
    const clock = new FakeClock();
    const policy = instrumented('prices', {
      clock,
      budget: RetryBudget.none,
      hedge: Hedge.at(0.95),
      repeatable: true,
    });
    for (let i = 0; i < 20; i++) policy.hedger()!.latency.add(0, 100);
    const threshold = Math.ceil(policy.hedger()!.threshold(0)!);
    for (const winner of [1, 2]) {
      const pending: ((value: string) => void)[] = [];
      const call = policy.run(
        ({ signal }) =>
          new Promise<string>((resolve, reject) => {
            pending.push(resolve);
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
      );
      await clock.advance(threshold);
      expect(pending).toHaveLength(2);
      pending[winner - 1]!('price');
      await call;
    }
    expect(await sdk.sum(MetricNames.hedges, { [A.policy]: 'prices' })).toBe(2);
    expect(await sdk.sum(MetricNames.hedgeWins, { [A.policy]: 'prices' })).toBe(1);
  });

  it('10,000 calls with distinct ids in the callback produce a constant number of series', async () => {
    // No budget: retries are never refused, so the outcomes (and the series) are the same every run.
    const policy = instrumented('orders', { attempts: 2, budget: RetryBudget.none });
    const call = (i: number) =>
      policy.tryRun(() => {
        const id = `order-${i}`;
        if (i % 10 === 0) throw new TransientError(`order ${id} failed`);
        return id;
      });
    for (let i = 1; i <= 100; i++) await call(i);
    const early = await sdk.seriesCount();
    for (let i = 101; i <= 10_000; i++) await call(i);
    const late = await sdk.seriesCount();

    expect(early).toBe(late);
    // calls {failed, succeeded} + attempts {Ok, Transient} + duration {failed, succeeded}.
    expect(late).toBe(6);
    expect(await sdk.sum(MetricNames.calls)).toBe(10_000);
    expect(await sdk.sum(MetricNames.attempts)).toBe(10_000 + 1000);
    const values = (await Promise.all(Object.values(MetricNames).map((name) => sdk.points(name))))
      .flat()
      .flatMap((p) => Object.values(p.attributes));
    expect(values.filter((v) => String(v).includes('order-'))).toEqual([]);
    expect(sdk.spans).toHaveLength(10_000);
    const leaked = sdk.spans.filter((s) =>
      JSON.stringify([s.name, s.attributes, s.events.map((e) => e.attributes), s.status]).includes(
        'order-',
      ),
    );
    expect(leaked).toHaveLength(0);
  });

  it('observable gauges: breaker state and budget utilization per policy', async () => {
    const clock = new FakeClock();
    const policy = instrumented('inventory', {
      clock,
      attempts: 1,
      breaker: Breaker.with({ consecutiveFailures: 5 }),
    });
    expect(await sdk.points(MetricNames.breakerState)).toEqual([
      expect.objectContaining({
        value: BREAKER_STATE_VALUES.closed,
        attributes: { [A.policy]: 'inventory' },
      }),
    ]);
    const utilization = await sdk.points(MetricNames.budgetUtilization);
    expect(utilization.map((p) => p.value)).toEqual([0]);

    for (let i = 0; i < 10; i++) {
      const call = policy.tryRun(() => {
        throw new TransientError('down');
      });
      await clock.runAll();
      await call;
    }
    expect(policy.breaker()!.state).toBe('open');
    expect((await sdk.points(MetricNames.breakerState)).map((p) => p.value)).toEqual([
      BREAKER_STATE_VALUES.open,
    ]);
  });

  it('instruments are created once per meter provider: two policies share them', async () => {
    const a = instrumented('a');
    const b = instrumented('b');
    await a.run(() => 1);
    await b.run(() => 2);
    const points = await sdk.points(MetricNames.calls);
    expect(points.map((p) => p.attributes[A.policy]).sort()).toEqual(['a', 'b']);
  });

  it('host and service attributes where known', async () => {
    const policy = withTelemetry(Resilience.default.with({ name: 'geo' }), {
      meterProvider: sdk.meterProvider,
      tracerProvider: sdk.tracerProvider,
      host: 'geo.internal',
      service: 'geo.v1.Lookup',
    });
    await policy.run(() => 1);
    expect((await sdk.points(MetricNames.calls))[0]!.attributes).toEqual({
      [A.policy]: 'geo',
      [A.host]: 'geo.internal',
      [A.service]: 'geo.v1.Lookup',
      [A.outcome]: 'succeeded',
      [A.reason]: 'succeeded',
    });
  });
});

describe('spans', () => {
  it('one span per call, child of the active span, attempts and retries as events, OK on success', async () => {
    const policy = instrumented('payments');
    const tracer = sdk.tracerProvider.getTracer('app');
    let calls = 0;
    const childSeen: (string | undefined)[] = [];
    await tracer.startActiveSpan('POST /checkout', async (request) => {
      await policy.run(() => {
        childSeen.push(trace.getActiveSpan()?.spanContext().spanId);
        if (++calls === 1) throw new TransientError('blip');
        return 'ok';
      });
      request.end();
    });

    const [span, request] = sdk.spans;
    expect(request!.name).toBe('POST /checkout');
    expect(span!.name).toBe('nresilience payments');
    expect(span!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId);
    expect(childSeen).toEqual([span!.spanContext().spanId, span!.spanContext().spanId]);
    expect(span!.events.map((e) => e.name)).toEqual(['attempt', 'retrying', 'attempt']);
    expect(span!.events[0]!.attributes).toEqual({
      [A.attempt]: 1,
      [A.outcome]: 'Transient',
      [A.duration]: expect.any(Number),
      [A.errorType]: 'TransientError',
    });
    expect(span!.events[1]!.attributes).toEqual({
      [A.attempt]: 1,
      [A.outcome]: 'Transient',
      [A.delay]: 0,
    });
    expect(span!.status.code).toBe(0); // UNSET: not an error
    expect(span!.attributes).toEqual({
      [A.policy]: 'payments',
      [A.criticality]: 'critical',
      [A.outcome]: 'succeeded',
      [A.reason]: 'succeeded',
      [A.attempt]: 2,
    });
  });

  it('the span carries the ambient criticality by level name', async () => {
    const policy = instrumented('recommendations');
    await AmbientCriticality.run('sheddable', () => policy.run(() => 'ok'));
    await policy.run(() => 'ok');
    expect(sdk.spans.map((span) => span.attributes[A.criticality])).toEqual([
      'sheddable',
      'critical',
    ]);
  });

  it('status error on failure, refusals as span events; concurrent calls keep their own spans', async () => {
    const clock = new FakeClock();
    const policy = instrumented('ledger', {
      clock,
      attempts: 3,
      budget: RetryBudget.of({ fraction: 0, minimumPerSecond: 0 }),
    });
    // Drain the bucket to one token: 9 calls retrying once each, concurrently.
    const calls = Array.from({ length: 9 }, (_, i) =>
      policy.tryRun(({ attempt }) => {
        if (attempt === 1) throw new TransientError(`first ${i}`);
        return i;
      }),
    );
    await clock.runAll();
    expect((await Promise.all(calls)).every((r) => r.ok)).toBe(true);
    expect(sdk.spans).toHaveLength(9);
    expect(
      sdk.spans.every((s) => s.events.map((e) => e.name).join() === 'attempt,retrying,attempt'),
    ).toBe(true);

    const refused = policy.tryRun(() => {
      throw new TransientError('down');
    });
    await clock.runAll();
    const result = await refused;
    expect(result.reason).toBe('budgetExhausted');
    const span = sdk.spans.at(-1)!;
    expect(span.events.map((e) => e.name)).toEqual(['attempt', 'retrying', 'attempt', 'rejected']);
    expect(span.events.at(-1)!.attributes).toEqual({
      [A.attempt]: 2,
      [A.reason]: 'budgetExhausted',
      [A.errorType]: 'CallRejectedError',
    });
    expect(span.status).toEqual({ code: 2, message: 'budgetExhausted' });
  });

  it('a thrown failure ends the span with status error and the call still rejects with the error', async () => {
    const policy = instrumented('search', { attempts: 1 });
    const error = new TransientError('down');
    await expect(
      policy.run(() => {
        throw error;
      }),
    ).rejects.toBe(error);
    expect(sdk.spans).toHaveLength(1);
    expect(sdk.spans[0]!.status).toEqual({ code: 2, message: 'attemptsExhausted' });
    expect(sdk.spans[0]!.ended).toBe(true);
  });

  it('traces: false records metrics without spans', async () => {
    const policy = withTelemetry(Resilience.default.with({ name: 'quiet' }), {
      meterProvider: sdk.meterProvider,
      tracerProvider: sdk.tracerProvider,
      traces: false,
    });
    await policy.run(() => 1);
    expect(sdk.spans).toHaveLength(0);
    expect(await sdk.sum(MetricNames.calls)).toBe(1);
  });
});

describe('a held call carried on (a resumed download)', () => {
  it('is one call: one span with both attempts, the retry and the resumption; calls = 1, attempts = 2', async () => {
    const policy = instrumented('files', { budget: RetryBudget.none });
    const held = new HeldCall();
    await policy.run(() => 'first part', { hold: held });
    expect(sdk.spans).toHaveLength(0);
    await policy.run(() => 'rest', {
      hold: held,
      continuing: {
        attempts: 1,
        error: new TransientError('body broke'),
        deadlineAt: Infinity,
        held,
      },
    });
    held.report({ kind: 'streamResumed', attempt: 2, verdict: 'Ok' });
    expect(sdk.spans).toHaveLength(0);
    held.end();
    expect(
      sdk.spans.map((s) => [
        s.name,
        s.events.map((e) => e.name),
        s.attributes[A.attempt],
        s.attributes[A.reason],
      ]),
    ).toEqual([
      ['nresilience files', ['attempt', 'retrying', 'attempt', 'streamResumed'], 2, 'succeeded'],
    ]);
    expect([
      await sdk.sum(MetricNames.calls),
      await sdk.sum(MetricNames.attempts),
      await sdk.sum(MetricNames.streamResumed),
    ]).toEqual([1, 2, 1]);
  });
});

describe('attaching', () => {
  it('withListener keeps telemetry; with({ onEvent }) replaces it (no metrics, no spans)', async () => {
    const seen: string[] = [];
    const policy = instrumented('payments').withListener((e: CallEvent) => seen.push(e.kind));
    await policy.run(() => 1);
    expect(seen).toEqual(['attempt', 'succeeded']);
    expect(await sdk.sum(MetricNames.calls)).toBe(1);
    expect(sdk.spans).toHaveLength(1);

    const replaced = policy.with({ onEvent: (e) => seen.push(e.kind) });
    await replaced.run(() => 1);
    expect(await sdk.sum(MetricNames.calls)).toBe(1);
    expect(sdk.spans).toHaveLength(1);
  });

  it('the observer alone, attached with withListener, records as withTelemetry does', async () => {
    const observer = new ResilienceTelemetry(sdk.meterProvider, sdk.tracerProvider).observer();
    const policy = Resilience.default.with({ name: 'method' }).withListener(observer);
    await policy.run(() => 1);
    expect(await sdk.sum(MetricNames.calls, { [A.policy]: 'method' })).toBe(1);
    expect(sdk.spans.map((s) => s.name)).toEqual(['nresilience method']);
  });

  it('without an SDK (no-op globals) calls run unchanged', async () => {
    const policy = withTelemetry(Resilience.default.with({ name: 'bare' }));
    await expect(policy.run(() => 42)).resolves.toBe(42);
    await expect(policy.tryRun(() => 7)).resolves.toMatchObject({ ok: true, value: 7 });
  });
});

describe('concurrency-limit gauges and refusals', () => {
  const providers = () => ({
    meterProvider: sdk.meterProvider,
    tracerProvider: sdk.tracerProvider,
  });
  it('nresilience.limit and nresilience.inflight read the limiter; a Limited refusal counts reason limited', async () => {
    const clock = new FakeClock();
    const policy = instrumented('search', { clock, attempts: 1, limit: Limit.concurrency(2) });
    const release: (() => void)[] = [];
    const held = [0, 1].map(() =>
      policy.run(() => new Promise<void>((resolve) => release.push(resolve))),
    );
    await Promise.resolve();
    expect((await sdk.points(MetricNames.limit)).map((p) => [p.attributes, p.value])).toEqual([
      [{ [A.policy]: 'search' }, 2],
    ]);
    expect((await sdk.points(MetricNames.inflight)).map((p) => p.value)).toEqual([2]);
    const refused = policy.tryRun(() => 'never');
    await clock.advance(100); // the guarded pause
    expect(await refused).toMatchObject({ ok: false, reason: 'limited', attempts: [] });
    expect(
      await sdk.sum(MetricNames.rejections, { [A.policy]: 'search', [A.reason]: 'limited' }),
    ).toBe(1);
    for (const resolve of release) resolve();
    await Promise.all(held);
    expect((await sdk.points(MetricNames.inflight)).map((p) => p.value)).toEqual([0]);
  });

  it('per host for keyed instances, bounded by the scope; the name reports no series of its own while its hosts do', async () => {
    await sdk.shutdown();
    sdk = new Sdk(AggregationTemporality.DELTA);
    const template = withTelemetry(
      Resilience.default.with({ name: 'cdn', limit: Limit.concurrency(3) }),
      { ...providers(), traces: false },
    );
    const hosts = new HostPolicies(template, 2);
    let release!: () => void;
    const held = hosts
      .for('https://a.example')
      .run(() => new Promise<void>((resolve) => (release = resolve)));
    await hosts.for('https://b.example').run(() => 'b');
    const series = async (name: string) =>
      (await sdk.points(name)).map((p) => [p.attributes[A.host] ?? null, p.value]);
    expect(await series(MetricNames.inflight)).toEqual([
      ['a.example', 1],
      ['b.example', 0],
    ]);
    expect(await series(MetricNames.limit)).toEqual([
      ['a.example', 3],
      ['b.example', 3],
    ]);
    release();
    await held;
    for (let i = 0; i < 50; i++) await hosts.for(`https://edge-${i}.example`).run(() => i);
    expect(await series(MetricNames.limit)).toEqual([
      ['edge-48.example', 3],
      ['edge-49.example', 3],
    ]);
  });

  it("a key of a scope without labels (a tenant) never takes over the name's gauge series", async () => {
    await sdk.shutdown();
    sdk = new Sdk(AggregationTemporality.DELTA);
    const clock = new FakeClock();
    const name = withTelemetry(
      Resilience.default.with({
        name: 'tenants',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        breaker: Breaker.with({ consecutiveFailures: 2, jitter: 'none' }),
      }),
      providers(),
    );
    const scope = new PolicyScope<string>(name);
    for (let i = 0; i < 2; i++)
      await scope.for('acme').tryRun(() => Promise.reject(new TransientError('down')));
    expect(scope.for('acme').breaker()!.state).toBe('open');
    expect(name.breaker()!.state).toBe('closed');
    // Its calls count under the name (read first: under delta a collection consumes the counts).
    expect(await sdk.sum(MetricNames.calls, { [A.policy]: 'tenants', [A.outcome]: 'failed' })).toBe(
      2,
    );
    expect(
      (await sdk.points(MetricNames.breakerState)).map((p) => [p.attributes, p.value]),
    ).toEqual([[{ [A.policy]: 'tenants' }, BREAKER_STATE_VALUES.closed]]);
  });
});

describe('gauges and robustness', () => {
  it('the gauges follow the instance that runs, even derived after withTelemetry (own breaker per instance)', async () => {
    const clock = new FakeClock();
    const base = Resilience.default.with({
      name: 'g1',
      clock,
      attempts: 1,
      budget: RetryBudget.none,
      breaker: Breaker.with({ consecutiveFailures: 2, jitter: 'none' }),
    });
    const policy = withTelemetry(base, {
      meterProvider: sdk.meterProvider,
      tracerProvider: sdk.tracerProvider,
    }).withListener(() => undefined);
    for (let i = 0; i < 2; i++)
      await policy.tryRun(() => Promise.reject(new TransientError('down')));
    expect(policy.breaker()!.state).toBe('open');
    expect((await sdk.points(MetricNames.breakerState)).map((p) => p.value)).toEqual([
      BREAKER_STATE_VALUES.open,
    ]);
  });

  it('a tracer that throws loses the span, never the call', async () => {
    const broken = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('tracer bug');
        },
        startActiveSpan: () => {
          throw new Error('tracer bug');
        },
      }),
    };
    const policy = withTelemetry(Resilience.default.with({ name: 't' }), {
      meterProvider: sdk.meterProvider,
      tracerProvider: broken as never,
    });
    await expect(policy.run(() => 1)).resolves.toBe(1);
    expect(await sdk.sum(MetricNames.calls)).toBe(1);
  });

  it('events of work that outlives its call do not reach the ended span', async () => {
    const clock = new FakeClock();
    const options = { meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider };
    const traced = withTelemetry(Resilience.default.with({ name: 'x', clock }), options);
    const untraced = withTelemetry(Resilience.default.with({ name: 'x', clock }), {
      ...options,
      traces: false,
    });
    const complaints: string[] = [];
    const note = (message: string) => void complaints.push(message);
    diag.setLogger(
      {
        error: note,
        warn: note,
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      DiagLogLevel.WARN,
    );
    let later!: Promise<unknown>;
    await traced.run(() => {
      later = new Promise<void>((resolve) => clock.setTimer(5, resolve)).then(() =>
        untraced.tryRun(() => 2),
      );
      return 1;
    });
    await clock.advance(5);
    await later;
    diag.disable();
    expect(sdk.spans.map((span) => span.events.map((e) => e.name))).toEqual([['attempt']]);
    expect(complaints).toEqual([]);
    expect(await sdk.sum(MetricNames.calls)).toBe(2);
  });
});

describe('keyed instances: host (HTTP, per origin) and service (gRPC, per service)', () => {
  const providers = () => ({
    meterProvider: sdk.meterProvider,
    tracerProvider: sdk.tracerProvider,
  });

  it("the HTTP client's per-origin policies record nresilience.host = the origin's host:port, on metrics, spans and gauges", async () => {
    const clock = new FakeClock();
    const template = withTelemetry(
      Resilience.default.with({
        name: 'storefront',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        breaker: Breaker.with({ consecutiveFailures: 1, failureRateFloor: 0, jitter: 'none' }),
      }),
      providers(),
    );
    const hosts = new HostPolicies(template, 64);
    await hosts.for('https://pay.example.com').run(() => 'paid');
    await hosts
      .for('http://127.0.0.1:8080')
      .tryRun(() => Promise.reject(new TransientError('down')));

    const calls = await sdk.points(MetricNames.calls);
    expect(calls.map((p) => [p.attributes, p.value])).toEqual([
      [
        {
          [A.policy]: 'storefront',
          [A.host]: 'pay.example.com',
          [A.outcome]: 'succeeded',
          [A.reason]: 'succeeded',
        },
        1,
      ],
      [
        {
          [A.policy]: 'storefront',
          [A.host]: '127.0.0.1:8080',
          [A.outcome]: 'failed',
          [A.reason]: 'attemptsExhausted',
        },
        1,
      ],
    ]);
    expect((await sdk.points(MetricNames.attempts)).map((p) => p.attributes)).toEqual([
      { [A.policy]: 'storefront', [A.host]: 'pay.example.com', [A.outcome]: 'Ok' },
      { [A.policy]: 'storefront', [A.host]: '127.0.0.1:8080', [A.outcome]: 'Transient' },
    ]);
    expect(sdk.spans.map((s) => [s.name, s.attributes[A.host]])).toEqual([
      ['nresilience storefront', 'pay.example.com'],
      ['nresilience storefront', '127.0.0.1:8080'],
    ]);
    // One breaker per host: only the failing host's is open, each gauge series under its host.
    const states = (await sdk.points(MetricNames.breakerState)).map((p) => [
      p.attributes[A.host] ?? null,
      p.value,
    ]);
    expect(states).toEqual(
      expect.arrayContaining([
        ['pay.example.com', BREAKER_STATE_VALUES.closed],
        ['127.0.0.1:8080', BREAKER_STATE_VALUES.open],
      ]),
    );
  });

  it("the gRPC interceptor's per-service policies record nresilience.service = package.Service (a method key keeps its service)", async () => {
    const template = withTelemetry(
      Resilience.default.with({ name: 'orders', backoff: Backoff.none }),
      providers(),
    );
    const services = new ServicePolicies(template, 64, undefined);
    await services.for('shop.v1.Orders').run(() => 1);
    await services.for('shop.v1.Stock/Reserve').run(() => 2);
    const calls = await sdk.points(MetricNames.calls);
    expect(calls.map((p) => p.attributes)).toEqual([
      {
        [A.policy]: 'orders',
        [A.service]: 'shop.v1.Orders',
        [A.outcome]: 'succeeded',
        [A.reason]: 'succeeded',
      },
      {
        [A.policy]: 'orders',
        [A.service]: 'shop.v1.Stock',
        [A.outcome]: 'succeeded',
        [A.reason]: 'succeeded',
      },
    ]);
    expect(sdk.spans.map((s) => s.attributes[A.service])).toEqual([
      'shop.v1.Orders',
      'shop.v1.Stock',
    ]);
  });

  it('a host evicted from the per-host LRU (maximumHosts) drops its gauge series; one that returns gets them again', async () => {
    // Delta: what the gauge callbacks observe in each collection, without the SDK's cumulative memory.
    await sdk.shutdown();
    sdk = new Sdk(AggregationTemporality.DELTA);
    const template = withTelemetry(
      Resilience.default.with({ name: 'cdn', breaker: Breaker.default }),
      { ...providers(), traces: false },
    );
    const hosts = new HostPolicies(template, 2);
    // The template itself (no host) is observed from withTelemetry on: only host series count here.
    const gaugeHosts = async (name: string) =>
      (await sdk.points(name))
        .map((p) => p.attributes[A.host])
        .filter((host) => host !== undefined)
        .sort();
    for (const host of ['a', 'b', 'c']) await hosts.for(`https://${host}.example`).run(() => host);
    // a was looked up once and never again: the sweep let it go when c came.
    expect(hosts.entries().map((e) => e.key)).toEqual(['https://b.example', 'https://c.example']);
    expect(await gaugeHosts(MetricNames.breakerState)).toEqual(['b.example', 'c.example']);
    expect(await gaugeHosts(MetricNames.budgetUtilization)).toEqual(['b.example', 'c.example']);
    await hosts.for('https://a.example').run(() => 'back');
    expect(await gaugeHosts(MetricNames.breakerState)).toHaveLength(2);
    expect(await gaugeHosts(MetricNames.breakerState)).toContain('a.example');
    // A hundred hosts through a scope of two: two series per gauge, whatever came before.
    for (let i = 0; i < 100; i++) await hosts.for(`https://edge-${i}.example`).run(() => i);
    expect(await gaugeHosts(MetricNames.breakerState)).toEqual([
      'edge-98.example',
      'edge-99.example',
    ]);
  });

  it('a reload (a new template) keeps every host and its gauge series: the hosts keep their state under the new settings', async () => {
    await sdk.shutdown();
    sdk = new Sdk(AggregationTemporality.DELTA);
    let current = withTelemetry(
      Resilience.default.with({ name: 'cdn', breaker: Breaker.default }),
      { ...providers(), traces: false },
    );
    const hosts = new HostPolicies(
      {
        get current() {
          return current;
        },
      },
      8,
    );
    await hosts.for('https://old.example').run(() => 1);
    current = current.with({ attempts: 2 });
    await hosts.for('https://new.example').run(() => 2);
    expect(
      (await sdk.points(MetricNames.breakerState))
        .map((p) => p.attributes[A.host])
        .filter((host) => host !== undefined),
    ).toEqual(['old.example', 'new.example']);
    expect(hosts.for('https://old.example').options.attempts).toBe(2);
  });

  it("a name's own breaker-state series reports the worst of its hosts' (as its health entry does)", async () => {
    await sdk.shutdown();
    sdk = new Sdk(AggregationTemporality.DELTA);
    const clock = new FakeClock();
    const template = withTelemetry(
      Resilience.default.with({
        name: 'orders',
        clock,
        attempts: 1,
        budget: RetryBudget.none,
        breaker: Breaker.with({ jitter: 'none' }),
      }),
      { ...providers(), traces: false },
    );
    const hosts = new HostPolicies(template, 8);
    const states = async () =>
      Object.fromEntries(
        (await sdk.points(MetricNames.breakerState)).map((p) => [
          String(p.attributes[A.host] ?? '(name)'),
          p.value,
        ]),
      );
    await hosts.for('https://ok.example').run(() => 'ok');
    expect(await states()).toEqual({
      '(name)': BREAKER_STATE_VALUES.closed,
      'ok.example': BREAKER_STATE_VALUES.closed,
    });
    for (let i = 0; i < 5; i++)
      await hosts
        .for('https://dead.example')
        .tryRun(() => Promise.reject(new TransientError('down')));
    expect(await states()).toEqual({
      '(name)': BREAKER_STATE_VALUES.open,
      'ok.example': BREAKER_STATE_VALUES.closed,
      'dead.example': BREAKER_STATE_VALUES.open,
    });
    expect(template.breaker()!.state).toBe('closed');
    await clock.advance(1_000);
    expect((await states())['(name)']).toBe(BREAKER_STATE_VALUES.halfOpen);
  });

  it("calls and attempts series are bounded by maximumHosts: an evicted host's series are dropped", async () => {
    await sdk.shutdown();
    sdk = new Sdk(AggregationTemporality.DELTA);
    const template = withTelemetry(
      Resilience.default.with({ name: 'cdn', backoff: Backoff.none, budget: RetryBudget.none }),
      { ...providers(), traces: false },
    );
    const hosts = new HostPolicies(template, 2);
    const seriesHosts = async (name: string) =>
      new Set(
        (await sdk.points(name))
          .map((p) => p.attributes[A.host])
          .filter((host) => host !== undefined),
      ).size;
    for (let i = 0; i < 1000; i++) await hosts.for(`https://edge-${i}.example`).run(() => i);
    expect([await seriesHosts(MetricNames.calls), await seriesHosts(MetricNames.attempts)]).toEqual(
      [2, 2],
    );
    // The duration histogram records per call: a delta export holds only the hosts that ran since the last one.
    await hosts.for('https://edge-999.example').run(() => 0);
    expect(await seriesHosts(MetricNames.callDuration)).toBe(1);
  });

  it("new settings (a reload) keep a host's calls series counting on from where it was", async () => {
    let current = withTelemetry(Resilience.default.with({ name: 'cdn', backoff: Backoff.none }), {
      ...providers(),
      traces: false,
    });
    const hosts = new HostPolicies(
      {
        get current() {
          return current;
        },
      },
      2,
    );
    for (let i = 0; i < 2; i++) await hosts.for('https://edge.example').run(() => i);
    expect(await sdk.sum(MetricNames.calls, { [A.host]: 'edge.example' })).toBe(2);
    current = current.with({ attempts: 2 });
    await hosts.for('https://edge.example').run(() => 0);
    expect(await sdk.sum(MetricNames.calls, { [A.host]: 'edge.example' })).toBe(3);
  });

  it('a keyed label wins over the configured host; one series per host', async () => {
    const template = withTelemetry(Resilience.default.with({ name: 'cdn' }), {
      ...providers(),
      traces: false,
      host: 'configured.example',
    });
    const hosts = new HostPolicies(template, 2);
    await template.run(() => 0);
    for (let i = 0; i < 50; i++) await hosts.for(`https://edge-${i % 2}.example`).run(() => i);
    const calls = await sdk.points(MetricNames.calls);
    expect(calls.map((p) => [p.attributes[A.host], p.value])).toEqual([
      ['configured.example', 1],
      ['edge-0.example', 25],
      ['edge-1.example', 25],
    ]);
  });
});
