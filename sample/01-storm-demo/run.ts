import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ResilientFetch, getResilientFetchToken } from '@nresilience/nestjs/http';
import { CheckoutModule } from './checkout.module.js';
import { DependencyServer } from './dependency-server.js';
import { networkHandles, networkHandlesClosed } from './handles.js';
import { LoadDriver } from './load-driver.js';
import { type MachineReading, MachineMeter } from './machine.js';
import {
  type RunExtras,
  type RunRecord,
  type RunSummary,
  secondLine,
  summarize,
} from './report.js';
import { type Scenario, totalSeconds } from './scenario.js';
import { Timeline } from './timeline.js';

// The dependency counts as done once it has been idle this long (longer than any backoff the policy waits).
const QUIET_MS = 500;
// Most time the run's closed sockets and listeners may take to leave the process, ms.
const CLOSE_BOUND_MS = 2000;

/** One run's results. */
export interface RunOutcome {
  readonly summary: RunSummary;
  readonly extras: RunExtras;
}

/** Where a run's per-second lines and complaints go (the console by default). */
export interface RunOutput {
  readonly line: (text: string) => void;
  readonly problem: (text: string) => void;
}

const CONSOLE: RunOutput = {
  line: (text) => console.log(text),
  problem: (text) => console.error(text),
};

/** Called between a run's stages. */
export interface RunHooks {
  /** After the warm-up, before the measured load (e.g. to read cumulative counters the run should not include). */
  readonly warmedUp?: () => Promise<void>;
}

/**
 * One run of the scenario: a fresh dependency and a fresh Nest app (budget on or off), the load
 * driver's whole plan, a printed line per second. Resolves after everything it opened has closed —
 * the driver's sockets, the app and its connections, the dependency and its pending answers — so
 * nothing of one run outlives it.
 */
export async function runOnce(
  label: string,
  budget: boolean,
  scenario: Scenario,
  output: RunOutput = CONSOLE,
  hooks: RunHooks = {},
): Promise<RunOutcome> {
  const handlesBefore = networkHandles();
  // The longest the app may still be working once the driver has gone: it cancels with the caller,
  // so this is a backstop for a call that does not.
  const quietBound = QUIET_MS + scenario.callTimeoutMs;
  const timeline = new Timeline(scenario.phases);
  const dependency = await DependencyServer.start(scenario.dependency, timeline);
  const meter = new MachineMeter();
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
    const plan = {
      url: `http://127.0.0.1:${port}`,
      rate: scenario.rate,
      concurrency: scenario.concurrency,
      callTimeoutMs: scenario.callTimeoutMs,
    };
    if (scenario.warmUpSeconds > 0) {
      // The run's timeline has not started, so the dependency is healthy throughout the warm-up.
      const warmUp = new Timeline([{ name: 'healthy', seconds: scenario.warmUpSeconds }]);
      const warming = new LoadDriver(
        { ...plan, durationMs: scenario.warmUpSeconds * 1000 },
        warmUp,
      );
      warmUp.start();
      await warming.run();
      await dependency.quiet(QUIET_MS, quietBound);
      dependency.forgetCounts();
    }
    await hooks.warmedUp?.();
    const driver = new LoadDriver({ ...plan, durationMs: totalSeconds(scenario) * 1000 }, timeline);

    let machine: MachineReading = {
      loopDelayP99Ms: 0,
      loopDelayMaxMs: 0,
      cpuPerSecond: 0,
      cpuWaitShare: null,
    };
    const record = (load: RunRecord['load']): RunRecord => ({
      load,
      dependency,
      timeline,
      rate: scenario.rate,
      machine,
    });
    let printed = 0;
    const printFinishedSeconds = (load: RunRecord['load'], upTo: number): void => {
      for (; printed < upTo; printed++)
        output.line(
          secondLine(label, record(load), printed, payments.hosts.entries(1)[0]?.budgetUtilization),
        );
    };
    meter.start();
    timeline.start();
    const running = driver.run();
    // The driver's counters are live while it runs; a second is printed once it is over (plus a
    // little slack for requests still on the wire at the boundary).
    ticker = setInterval(
      () => printFinishedSeconds(driver.live, Math.floor((timeline.elapsed() - 50) / 1000)),
      100,
    );
    const load = await running;
    // Calls the driver abandoned were cancelled with their connections; a retry already on the wire
    // may still be answered. Let it finish first.
    if (!(await dependency.quiet(QUIET_MS, quietBound)))
      output.problem(`${label}: the app was still calling the dependency when the run ended`);
    machine = meter.stop();
    clearInterval(ticker);
    printFinishedSeconds(load, Math.max(load.sent.length, dependency.received.length));
    return {
      summary: summarize(record(load)),
      extras: { shed: dependency.shed, skipped: load.skipped, statuses: load.statuses },
    };
  } finally {
    clearInterval(ticker);
    meter.stop();
    await app?.close();
    await dependency.close();
    const left = await networkHandlesClosed(handlesBefore, CLOSE_BOUND_MS);
    if (left.length > 0)
      output.problem(
        `${label}: still open ${CLOSE_BOUND_MS} ms after closing the run: ${left.join(', ')}`,
      );
  }
}
