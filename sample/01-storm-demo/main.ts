/**
 * The storm demo, in two acts.
 * - Act 1: the same checkout service against the same failing dependency, twice — with the retry
 *   budget on (the default) and off — showing the load the dependency feels.
 * - Act 2: the storm the project's first sentence names, on real services: a chain of three Nest
 *   services in separate processes in front of a database, each retrying three times, once with
 *   naive retry loops and once with the library's defaults; a table per phase and a chart.
 *
 *   npm run demo                   both acts, about 2 min 30 s
 *   npm run demo -- --quick        both acts, under a minute
 *   npm run demo -- --act 2        one act only (1 or 2)
 *   npm run demo -- --hops 4 --attempts 4   act 2's chain: 3 or 4 services, 2 to 5 attempts each
 *   npm run demo -- --json         also prints every figure as one JSON object on the last line
 *   npm run demo -- --metrics      act 1 through the NodeSDK + Prometheus exporter (`otel-metrics.ts`)
 *   npm run demo -- --help         the options and the exit codes (`usage.ts`)
 *
 * Exit codes: 0 every act's claim held; 4 one did not (on a machine that kept up); 5 the machine was
 * too slow for the numbers to mean anything (see `verdict.ts`); 1 the demo failed, or an option was
 * not understood (the message and the usage, no stack); 2 the watchdog ended a run that did not end
 * by itself; 3 something the demo opened was still open after closing.
 */
import 'reflect-metadata';
import { machineLoad } from './machine.js';
import { table } from './report.js';
import { runOnce } from './run.js';
import { FULL, QUICK, totalSeconds } from './scenario.js';
import { EXIT_CODES, type Verdict, judge, verdictText } from './verdict.js';
import { DemoTelemetry, type OtelTotals, difference, otelTable } from './otel-metrics.js';
import { USAGE } from './usage.js';
import { DemoArgsError, type DemoArgs, parseDemoArgs } from './chain/demo-args.js';
import { actTwo } from './chain/act-two.js';
import {
  type ChainScenario,
  FULL_CHAIN,
  QUICK_CHAIN,
  chainSeconds,
} from './chain/chain-scenario.js';
import { worstKind } from './chain/chain-verdict.js';

async function actOne(args: DemoArgs): Promise<{ verdict: Verdict; json: object }> {
  const scenario = args.quick ? QUICK : FULL;
  console.log(
    `act 1: ${scenario.rate} calls/s to /checkout; payments dependency ` +
      scenario.phases.map((phase) => `${phase.name} ${phase.seconds}s`).join(', ') +
      ` (degraded = ${scenario.dependency.degradedSlowdown}x slower, ${scenario.dependency.degradedErrorRate * 100}% 503s, ` +
      `${scenario.dependency.capacity} requests in flight at most)`,
  );
  const otel = args.metrics ? await DemoTelemetry.install() : undefined;
  if (otel !== undefined)
    console.log(
      `metrics: ${otel.url} (OpenTelemetry NodeSDK, Prometheus exporter) while the demo runs`,
    );
  // The SDK's counters are cumulative: each run's share is what it added after its warm-up.
  let warm: OtelTotals | undefined;
  const hooks = { warmedUp: async () => void (warm = await otel?.totals()) };
  const on = await runOnce('budget on', true, scenario, undefined, hooks);
  const otelOn = otel === undefined ? undefined : difference(await otel.totals(), warm);
  const off = await runOnce('budget off', false, scenario, undefined, hooks);
  const otelOff = otel === undefined ? undefined : difference(await otel.totals(), warm);
  await otel?.shutdown();

  console.log('');
  console.log(table(on.summary, off.summary, { on: on.extras, off: off.extras }));
  if (otelOn !== undefined && otelOff !== undefined) {
    console.log('');
    console.log(otelTable(otelOn, otelOff, { on: on.summary, off: off.summary }));
  }
  const verdict = judge(on.summary, off.summary);
  console.log('');
  console.log(verdictText(verdict, machineLoad()));
  return { verdict, json: { budgetOn: on.summary, budgetOff: off.summary, verdict } };
}

/** Act 2's plan for these options. */
function chainScenario(args: DemoArgs): ChainScenario {
  return { ...(args.quick ? QUICK_CHAIN : FULL_CHAIN), hops: args.hops, attempts: args.attempts };
}

async function main(): Promise<void> {
  let args: DemoArgs;
  try {
    args = parseDemoArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof DemoArgsError)) throw error;
    // A mistyped option is the user's to fix: say which, and how to call the demo, without a stack.
    console.error(`storm demo: ${error.message}\n\n${USAGE}`);
    process.exitCode = 1;
    return;
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const one = args.quick ? QUICK : FULL;
  const two = chainScenario(args);
  // Act 1: per run the warm-up and the load window, each followed by at most one call timeout for the
  // driver's last calls to settle and one for the app to go quiet. Act 2: per configuration the
  // warm-up, the phases and one call timeout, plus the processes' start. Plus start-up on a busy machine.
  const bound =
    (args.acts.includes(1)
      ? 2 * ((one.warmUpSeconds + totalSeconds(one)) * 1000 + 4 * one.callTimeoutMs)
      : 0) +
    (args.acts.includes(2)
      ? 2 * ((two.warmUpSeconds + chainSeconds(two)) * 1000 + 2 * two.callTimeoutMs + 30_000)
      : 0) +
    30_000;
  // The runs are bounded by construction; this is the backstop if something in them is not.
  const watchdog = setTimeout(() => {
    const load = machineLoad();
    console.error(
      `storm demo: still running after ${bound} ms, giving up (load average ${load.loadAverage} on ${load.cores} cores)`,
    );
    process.exit(2);
  }, bound);
  watchdog.unref();

  const verdicts: Verdict[] = [];
  const json: Record<string, unknown> = {};
  if (args.acts.includes(1)) {
    const act = await actOne(args);
    verdicts.push(act.verdict);
    Object.assign(json, act.json);
  }
  if (args.acts.includes(2)) {
    if (args.acts.includes(1)) console.log('');
    const act = await actTwo(two);
    verdicts.push(act.verdict);
    json.chain = {
      scenario: act.scenario,
      naive: act.naive,
      defaults: act.defaults,
      verdict: act.verdict,
      chart: act.chart,
    };
  }
  clearTimeout(watchdog);
  const kind = worstKind(verdicts.map((v) => v.kind));
  if (verdicts.length > 1)
    console.log(
      `\ndemo: ${kind === 'held' ? 'both acts held' : kind === 'notHeld' ? 'NOT held (see the verdicts above)' : 'no verdict: the machine was too slow'} (exit ${EXIT_CODES[kind]})`,
    );
  // `verdict` stays act 1's (beside its runs), act 2's is in `chain`; `demo` is what the exit code says.
  if (args.json)
    console.log(
      JSON.stringify({ ...json, demo: { kind, exitCode: EXIT_CODES[kind] }, load: machineLoad() }),
    );
  process.exitCode = EXIT_CODES[kind];

  // Everything was closed and waited for above; if a handle still holds the process, say which instead of hanging.
  setTimeout(() => {
    console.error(
      'storm demo: still alive after closing everything:',
      process.getActiveResourcesInfo().join(', '),
    );
    process.exit(3);
  }, 2000).unref();
}

main().catch((error: unknown) => {
  console.error('storm demo failed:', error);
  process.exitCode = 1;
});
