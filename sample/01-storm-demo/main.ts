/**
 * The storm demo: the same checkout service against the same failing dependency, twice — with the
 * retry budget on (the default) and off — showing the load the dependency feels.
 *
 *   npm run demo                   about 60 s
 *   npm run demo -- --quick        about 22 s
 *   npm run demo -- --json         also prints the summary as one JSON object on the last line
 *   npm run demo -- --metrics      NodeSDK + Prometheus exporter: serves /metrics while it runs and prints
 *                                  calls, attempts and attempts/call scraped from it
 *   npm run demo -- --help         the options and the exit codes (`usage.ts`)
 *
 * Exit codes: 0 the retry budget held; 4 it did not (on a machine that kept up); 5 the machine was
 * too slow for the numbers to mean anything (see `verdict.ts`); 1 the demo failed, or an option was
 * not understood (the message and the usage, no stack); 2 the watchdog ended a run that did not end
 * by itself; 3 something the demo opened was still open after closing.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { machineLoad } from './machine.js';
import { table } from './report.js';
import { runOnce } from './run.js';
import { FULL, QUICK, totalSeconds } from './scenario.js';
import { EXIT_CODES, judge, verdictText } from './verdict.js';
import { DemoTelemetry, type OtelTotals, difference, otelTable } from './otel-metrics.js';
import { USAGE } from './usage.js';

async function main(): Promise<void> {
  let values: { quick?: boolean; json?: boolean; metrics?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { quick: { type: 'boolean' }, json: { type: 'boolean' }, metrics: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (error) {
    // A mistyped option is the user's to fix: say which, and how to call the demo, without a stack.
    console.error(`storm demo: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 1;
    return;
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const scenario = values.quick ? QUICK : FULL;
  // Per run: the warm-up and the load window, each followed by at most one call timeout for the
  // driver's last calls to settle and one for the app to go quiet; plus the apps' start-up on a busy machine.
  const bound = 2 * ((scenario.warmUpSeconds + totalSeconds(scenario)) * 1000 + 4 * scenario.callTimeoutMs) + 30_000;
  // The runs are bounded by construction; this is the backstop if something in them is not.
  const watchdog = setTimeout(() => {
    const load = machineLoad();
    console.error(`storm demo: still running after ${bound} ms, giving up (load average ${load.loadAverage} on ${load.cores} cores)`);
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
  // The SDK's counters are cumulative: each run's share is what it added after its warm-up.
  let warm: OtelTotals | undefined;
  const hooks = { warmedUp: async () => void (warm = await otel?.totals()) };
  const on = await runOnce('budget on', true, scenario, undefined, hooks);
  const otelOn = otel === undefined ? undefined : difference(await otel.totals(), warm);
  const off = await runOnce('budget off', false, scenario, undefined, hooks);
  const otelOff = otel === undefined ? undefined : difference(await otel.totals(), warm);
  await otel?.shutdown();
  clearTimeout(watchdog);

  console.log('');
  console.log(table(on.summary, off.summary, { on: on.extras, off: off.extras }));
  if (otelOn !== undefined && otelOff !== undefined) {
    console.log('');
    console.log(otelTable(otelOn, otelOff, { on: on.summary, off: off.summary }));
  }
  const verdict = judge(on.summary, off.summary);
  const load = machineLoad();
  console.log('');
  console.log(verdictText(verdict, load));
  if (values.json) console.log(JSON.stringify({ budgetOn: on.summary, budgetOff: off.summary, verdict, load }));
  process.exitCode = EXIT_CODES[verdict.kind];

  // Everything was closed and waited for above; if a handle still holds the process, say which instead of hanging.
  setTimeout(() => {
    console.error('storm demo: still alive after closing everything:', process.getActiveResourcesInfo().join(', '));
    process.exit(3);
  }, 2000).unref();
}

main().catch((error: unknown) => {
  console.error('storm demo failed:', error);
  process.exitCode = 1;
});
