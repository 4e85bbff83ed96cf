/**
 * The storm demo: the same checkout service against the same failing dependency, twice — with the
 * retry budget on (the default) and off — showing the load the dependency feels.
 *
 *   npm run demo                   about 55 s
 *   npm run demo -- --quick        about 15 s
 *   npm run demo -- --json         also prints the summary as one JSON object on the last line
 *   npm run demo -- --metrics      NodeSDK + Prometheus exporter: serves /metrics while it runs and prints
 *                                  calls, attempts and attempts/call scraped from it
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ResilientFetch, getResilientFetchToken } from '@nresilience/nestjs/http';
import { CheckoutModule } from './checkout.module.js';
import { DependencyServer } from './dependency-server.js';
import { LoadDriver } from './load-driver.js';
import { type RunExtras, type RunRecord, type RunSummary, secondLine, summarize, table } from './report.js';
import { FULL, QUICK, type Scenario, totalSeconds } from './scenario.js';
import { Timeline } from './timeline.js';
import { DemoTelemetry, difference, otelTable } from './otel-metrics.js';

// The dependency counts as done once it has been idle this long (longer than any backoff the policy waits).
const QUIET_MS = 500;

/** One run's results. */
interface RunOutcome {
  readonly summary: RunSummary;
  readonly extras: RunExtras;
}

async function runOnce(label: string, budget: boolean, scenario: Scenario): Promise<RunOutcome> {
  const timeline = new Timeline(scenario.phases);
  const dependency = await DependencyServer.start(scenario.dependency, timeline);
  let app: INestApplication | undefined;
  let ticker: NodeJS.Timeout | undefined;
  try {
    app = await NestFactory.create(CheckoutModule.forRun({ paymentsUrl: dependency.url, budget }), {
      // Failed checkouts are the point of the demo; only problems with the demo itself should print.
      logger: ['error', 'warn'],
      abortOnError: false,
    });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    // The retry budget actually spent is the dependency host's own (per-host state).
    const payments = app.get<ResilientFetch>(getResilientFetchToken('payments'));
    const driver = new LoadDriver(
      {
        url: `http://127.0.0.1:${port}`,
        rate: scenario.rate,
        durationMs: totalSeconds(scenario) * 1000,
        concurrency: scenario.concurrency,
        callTimeoutMs: scenario.callTimeoutMs,
      },
      timeline,
    );

    const record = (load: RunRecord['load']): RunRecord => ({ load, dependency, timeline, rate: scenario.rate });
    let printed = 0;
    const printFinishedSeconds = (load: RunRecord['load'], upTo: number): void => {
      for (; printed < upTo; printed++) console.log(secondLine(label, record(load), printed, payments.hosts.entries(1)[0]?.budgetUtilization));
    };
    timeline.start();
    const running = driver.run();
    // The driver's counters are live while it runs; a second is printed once it is over (plus a
    // little slack for requests still on the wire at the boundary).
    ticker = setInterval(() => printFinishedSeconds(driver.live, Math.floor((timeline.elapsed() - 50) / 1000)), 100);
    const load = await running;
    // Calls the driver abandoned may still be retrying inside the app; let them finish first.
    if (!(await dependency.quiet(QUIET_MS, scenario.callTimeoutMs))) console.error(`${label}: the app was still calling the dependency when the run ended`);
    clearInterval(ticker);
    printFinishedSeconds(load, Math.max(load.sent.length, dependency.received.length));
    return { summary: summarize(record(load)), extras: { shed: dependency.shed, skipped: load.skipped, statuses: load.statuses } };
  } finally {
    clearInterval(ticker);
    await app?.close();
    await dependency.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, json: { type: 'boolean' }, metrics: { type: 'boolean' } }, strict: true });
  const scenario = values.quick ? QUICK : FULL;
  const bound = (2 * totalSeconds(scenario) + 20) * 1000;
  // The runs are bounded by construction; this is the backstop if something in them is not.
  const watchdog = setTimeout(() => {
    console.error(`storm demo: still running after ${bound} ms, giving up`);
    process.exit(2);
  }, bound);
  watchdog.unref();

  console.log(
    `storm demo: ${scenario.rate} calls/s to /checkout; payments dependency ` +
      scenario.phases.map((phase) => `${phase.name} ${phase.seconds}s`).join(', ') +
      ` (degraded = ${scenario.dependency.degradedSlowdown}x slower, ${scenario.dependency.degradedErrorRate * 100}% 503s, ` +
      `${scenario.dependency.capacity} requests in flight at most)`,
  );
  const otel = values.metrics ? await DemoTelemetry.install() : undefined;
  if (otel !== undefined) console.log(`metrics: ${otel.url} (OpenTelemetry NodeSDK, Prometheus exporter) while the demo runs`);
  const on = await runOnce('budget on', true, scenario);
  const otelOn = await otel?.totals();
  const off = await runOnce('budget off', false, scenario);
  const otelOff = await otel?.totals();
  await otel?.shutdown();
  clearTimeout(watchdog);

  console.log('');
  console.log(table(on.summary, off.summary, { on: on.extras, off: off.extras }));
  if (otelOn !== undefined && otelOff !== undefined) {
    console.log('');
    console.log(otelTable(otelOn, difference(otelOff, otelOn), { on: on.summary, off: off.summary }));
  }
  if (values.json) console.log(JSON.stringify({ budgetOn: on.summary, budgetOff: off.summary }));

  // Everything was closed above; if a handle still holds the process, say which instead of hanging.
  setTimeout(() => {
    console.error('storm demo: still alive after closing everything:', process.getActiveResourcesInfo().join(', '));
    process.exit(3);
  }, 2000).unref();
}

main().catch((error: unknown) => {
  console.error('storm demo failed:', error);
  process.exitCode = 1;
});
