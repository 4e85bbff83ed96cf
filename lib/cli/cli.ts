import { parseArgs } from 'node:util';
import { type Policy, PolicyConfigError } from '../core/index.js';
import type { ValueRule } from '../core/internal.js';
import { ConfigFileError, parseConfigText } from '../config/config-file.js';
import { parseDuration, parseResilienceConfig } from '../config/policy-config.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { MAX_SEED, SEED_RULE } from '../testing/seeded-random.js';
import { SIMULATED_RATE_RULE } from '../testing/simulation/matrix.js';
import type { SimulationReport } from '../testing/simulation/report.js';
import { Simulate } from '../testing/simulation/simulate.js';
import { matrixCommand } from './matrix-command.js';
import { CHAIN_MATRIX_RATE, HOPS_RULE } from '../testing/simulation/chain-matrix.js';
import { chainMatrixCommand } from './chain-matrix-command.js';
import { fleetCommand } from './fleet-command.js';
import { policyFromPlan } from '../config/policy-from-plan.js';
import { applyChanges, parseCompareSpec } from './compare-spec.js';
import { parseDependencySpec } from './dependency-spec.js';
import { DEFAULT_RATE, SCENARIOS, type ScenarioName, scenario } from './scenarios.js';
import { renderChart } from './svg-chart.js';
import type { CliIo } from './cli-io.js';
import { UsageError, UsageMessage } from './usage-error.js';
import { explainPlan } from './explain-plan.js';
import type { PolicyPlan } from '../config/policy-config.js';

export type { CliIo } from './cli-io.js';

/** Usage of `nresilience explain`. */
export const EXPLAIN_USAGE =
  'Usage: nresilience explain --config <resilience.yaml|json> --policy <name>';

/** The usage text `nresilience --help` prints. */
export const USAGE = `Usage: nresilience simulate --config <resilience.yaml|json> --policy <name> [options]
       nresilience simulate --fleet [--config <file> --policy <name>] [--seeds] [--duration] [--json]
       nresilience explain --config <resilience.yaml|json> --policy <name>

Runs a policy from your ResilienceModule config against a modelled dependency on a virtual clock
and reports what it cost: availability, load multiplier, worst second, latency, breaker opens.

Options:
  --config <file>       YAML or JSON config in the ResilienceModule.forRoot format ({ policies,
                        defaults }); .json is read as JSON, any other name as YAML
  --policy <name>       the policy to simulate (a key of "policies")
  --scenario <name>     ${SCENARIOS.join(' | ')} (default brownout: 8x slower from 0:30 for 1 min)
  --dependency <k=v,...> the dependency's own numbers: p50=<duration>, p99=<duration>,
                        timeout=<duration>|none, workers=<n>, queue=<n>|none, failures=<0..1>
                        (default p50=20ms,p99=200ms,timeout=150ms, 100 workers per 500 calls/s)
  --compare <k=v,...>   also run a variant of the policy; repeatable. Any policy field by its
                        config path: budget=none, attempts=5, deadline=2s|none,
                        attemptTimeout=800ms, breaker=on|off, breaker.consecutiveFailures=10,
                        limit=off, limit.concurrency=20; with --matrix, one row per scenario
  --seed <n>            integer in [0, ${MAX_SEED}] (default 42)
  --duration <d>        simulated time, e.g. 300000, 90s, 5m (default 5m)
  --rate <n>            calls per second (default ${DEFAULT_RATE}; the dependency's workers scale with it)
  --json                print the reports as JSON instead of tables
  --svg <file>          write a chart (requests/s, availability/s, breaker state, budget) as SVG
  --matrix              run the scenario matrix instead (healthy, failing 1-70 %, brownout, outages,
                        flapping, overload 1.5x and 3x, queue-latency, slow, cold start, latency
                        tail) for the policy, the policy with its breaker, limit and budget off
                        (each when it has one) and Google SRE's adaptive throttle; prints one
                        table (or --json); "limited" is the share of calls refused as limited
  --seeds <a,b,...>     matrix seeds (default 1,2,3)
  --scenarios <a,b,...> matrix scenarios to run (default all)
  --hops <n>            with --matrix: a chain of n services (1-8) that each run the policy, the
                        last one calling the modelled database, beside the same chain of naive
                        retry loops (no budget, no breaker); scenarios healthy, failing-10,
                        failing-50, database-down, outage-10s; --rate is the frontend's (default 100)
  --fleet               run the fleet matrix instead: 10 processes offered 800 calls/s unevenly
                        against a provider accepting 500/s (429 above it): the limit shared
                        through a store, 50/s per process, no limit, a store outage, a strict
                        provider; every process runs the policy (Resilience.default without
                        --config); --duration per run (default 30s), --seeds (default 1,2)
  -h, --help            show this help

Exit codes: 0 done, 2 invalid arguments or config, 1 unexpected failure.`;

interface Variant {
  readonly label: string;
  readonly policy: Policy;
}

/** The number `text` writes, when it is written as `pattern` says and `rule` accepts it. @throws UsageError naming `flag` */
function parseNumber(flag: string, text: string, pattern: RegExp, rule: ValueRule<number>): number {
  const n = Number(text);
  if (!pattern.test(text) || !rule.accepts(n)) throw new UsageError(flag, text, rule.rule);
  return n;
}

/** Module-level keys `forRoot` accepts beside the policy config; ignored here. */
const MODULE_KEYS = ['isGlobal', 'exceptionFilter'];

/** The config document of `--config` (YAML or JSON by the file's name), without module-level keys. */
function readConfig(io: CliIo, path: string): Record<string, unknown> {
  let text: string;
  try {
    text = io.readFile(path);
  } catch (error) {
    throw new UsageError(
      '--config',
      path,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let document: unknown;
  try {
    document = parseConfigText(text, path);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new UsageMessage(`--config ${error.message}`);
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new UsageError('--config', path, 'must hold an object { policies, defaults? }');
  }
  return Object.fromEntries(Object.entries(document).filter(([key]) => !MODULE_KEYS.includes(key)));
}

/**
 * The named policy of a config document. `where` prefixes a config error's message (the file, or
 * the `--compare` spec whose changes made it invalid).
 */
function policyFromConfig(
  config: Record<string, unknown>,
  name: string,
  path: string,
  where: string,
): Policy {
  return planFromConfig(config, name, path, where).policy;
}

/** The named policy of a config document and the plan it was built from (its preset, `extends`). */
function planFromConfig(
  config: Record<string, unknown>,
  name: string,
  path: string,
  where: string,
): { plan: PolicyPlan; policy: Policy } {
  let parsed;
  try {
    parsed = parseResilienceConfig(config);
  } catch (error) {
    if (error instanceof ResilienceConfigError)
      throw new UsageMessage(`${where}: ${error.message}`);
    throw error;
  }
  const plan = parsed.policies.get(name);
  if (plan === undefined) {
    throw new UsageError(
      '--policy',
      name,
      `must name a policy of ${path} (${[...parsed.policies.keys()].join(', ') || 'none defined'})`,
    );
  }
  return { plan, policy: policyFromPlan(plan) };
}

/** `config` with one `--compare` spec applied to policy `name` (its other policies untouched). */
function compareConfig(
  config: Record<string, unknown>,
  name: string,
  spec: string,
): Record<string, unknown> {
  const policies = (config.policies ?? {}) as Record<string, unknown>;
  const own = policies[name];
  const base =
    own !== null && typeof own === 'object' && !Array.isArray(own)
      ? (own as Record<string, unknown>)
      : {};
  return {
    ...config,
    policies: { ...policies, [name]: applyChanges(base, parseCompareSpec(spec)) },
  };
}

function summaryTable(runs: readonly { label: string; report: SimulationReport }[]): string {
  const header = [
    'run',
    'availability',
    'load ×',
    'worst second ×',
    'p50 ms',
    'p99 ms',
    'breaker opens',
    'time to recover',
  ];
  const rows = runs.map(({ label, report: r }) => [
    label,
    `${(r.availability * 100).toFixed(2)}%`,
    r.loadMultiplier.toFixed(3),
    r.amplification.toFixed(3),
    r.latency(0.5).toFixed(1),
    r.latency(0.99).toFixed(1),
    String(r.breakerOpens),
    r.timeToRecover === undefined ? '-' : `${(r.timeToRecover / 1000).toFixed(0)}s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * Runs the CLI with `argv` (the arguments after `node main.js`).
 * @returns the exit code: 0 done, 2 invalid arguments or config (message on stderr), 1 unexpected failure
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return argv[0] === 'explain'
      ? explainCommand(argv.slice(1), io)
      : await simulateCommand(argv, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof UsageMessage) {
      io.stderr(`nresilience: ${error.message}\n`);
      return 2;
    }
    if (error instanceof PolicyConfigError) {
      io.stderr(`nresilience: ${error.message}\n`);
      return 2;
    }
    io.stderr(`nresilience: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  }
}

/** `nresilience explain --config <file> --policy <name>`: the resolved policy and what each number means. */
function explainCommand(argv: readonly string[], io: CliIo): number {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      options: { config: { type: 'string' }, policy: { type: 'string' } },
    }).values;
  } catch (error) {
    throw new UsageMessage(`${(error as Error).message}\n\n${EXPLAIN_USAGE}`);
  }
  if (values.config === undefined)
    throw new UsageError(
      '--config',
      undefined,
      'is required: the path of a YAML or JSON config ({ policies, defaults })',
    );
  if (values.policy === undefined)
    throw new UsageError('--policy', undefined, 'is required: the name of a policy in the config');
  const { plan, policy } = planFromConfig(
    readConfig(io, values.config),
    values.policy,
    values.config,
    values.config,
  );
  io.stdout(`${explainPlan(plan, policy.with({ name: values.policy }))}\n`);
  return 0;
}

/** `--duration`'s ms. @throws UsageError naming `--duration` unless a duration > 0 and at most 1 h */
function readDuration(text: string): number {
  let duration: number;
  try {
    duration = parseDuration(text, '--duration', { positive: true });
  } catch (error) {
    throw new UsageError('--duration', text, (error as PolicyConfigError).rule);
  }
  if (duration > 3_600_000)
    throw new UsageError('--duration', text, 'must be at most 1h of simulated time');
  return duration;
}

/**
 * `simulate --fleet`: the fleet matrix, for the policy `--config`/`--policy` name (both or neither).
 * @throws UsageError for an option that does not go with `--fleet`, or only one of `--config` and `--policy`
 */
function fleetFromArgs(
  values: {
    config?: string;
    policy?: string;
    seeds?: string;
    duration?: string;
    json: boolean;
    matrix: boolean;
    hops?: string;
    seed?: string;
    scenario?: string;
    scenarios?: string;
    rate?: string;
    dependency?: string;
    svg?: string;
    compare: string[];
  },
  io: CliIo,
): Promise<number> {
  if (values.matrix) throw new UsageError('--fleet', true, 'does not go with --matrix');
  // The fleet matrix fixes its scenarios, rates and provider; an option it would ignore is refused.
  for (const [flag, value] of [
    ['--hops', values.hops],
    ['--seed', values.seed],
    ['--scenario', values.scenario],
    ['--scenarios', values.scenarios],
    ['--rate', values.rate],
    ['--dependency', values.dependency],
    ['--svg', values.svg],
    ['--compare', values.compare.length === 0 ? undefined : values.compare.join(' ')],
  ] as const) {
    if (value !== undefined)
      throw new UsageError(
        flag,
        value,
        'does not go with --fleet (its rows, rates and provider are fixed; use --seeds and --duration)',
      );
  }
  if ((values.config === undefined) !== (values.policy === undefined))
    throw new UsageError(
      values.config === undefined ? '--config' : '--policy',
      undefined,
      "is required with --fleet when the other is given (both name the processes' policy)",
    );
  const policy =
    values.config === undefined || values.policy === undefined
      ? undefined
      : policyFromConfig(
          readConfig(io, values.config),
          values.policy,
          values.config,
          values.config,
        ).with({
          name: values.policy,
        });
  const duration = values.duration === undefined ? undefined : readDuration(values.duration);
  return fleetCommand(policy, { seeds: values.seeds, duration, json: values.json }, io);
}

async function simulateCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string' },
        policy: { type: 'string' },
        scenario: { type: 'string' },
        compare: { type: 'string', multiple: true, default: [] },
        dependency: { type: 'string' },
        seed: { type: 'string' },
        duration: { type: 'string' },
        rate: { type: 'string' },
        hops: { type: 'string' },
        json: { type: 'boolean', default: false },
        matrix: { type: 'boolean', default: false },
        fleet: { type: 'boolean', default: false },
        seeds: { type: 'string' },
        scenarios: { type: 'string' },
        svg: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    // parseArgs names the option in its message ("Unknown option '--sede'", "Option '--seed <value>' argument missing").
    throw new UsageMessage(`${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'simulate') {
    throw new UsageError(
      'command',
      positionals.join(' ') || undefined,
      `must be "simulate" or "explain"\n\n${USAGE}`,
    );
  }
  if (values.fleet) return fleetFromArgs(values, io);
  if (values.config === undefined)
    throw new UsageError(
      '--config',
      undefined,
      'is required: the path of a YAML or JSON config ({ policies, defaults })',
    );
  if (values.policy === undefined)
    throw new UsageError('--policy', undefined, 'is required: the name of a policy in the config');
  const scenarioName = (values.scenario ?? 'brownout') as ScenarioName;
  if (!SCENARIOS.includes(scenarioName))
    throw new UsageError('--scenario', values.scenario, `must be one of ${SCENARIOS.join(', ')}`);
  const seed = parseNumber('--seed', values.seed ?? '42', /^\s*\d+\s*$/, SEED_RULE);
  const duration = readDuration(values.duration ?? '5m');
  if (values.hops !== undefined && !values.matrix)
    throw new UsageError('--hops', values.hops, 'only goes with --matrix (the chain matrix)');
  const hops =
    values.hops === undefined ? undefined : parseNumber('--hops', values.hops, /^\d+$/, HOPS_RULE);
  const rate = parseNumber(
    '--rate',
    values.rate ?? String(hops === undefined ? DEFAULT_RATE : CHAIN_MATRIX_RATE),
    /^\d+(\.\d+)?$/,
    SIMULATED_RATE_RULE,
  );
  const model = values.dependency === undefined ? {} : parseDependencySpec(values.dependency);
  for (const spec of values.compare) parseCompareSpec(spec);

  const config = readConfig(io, values.config);
  const base = policyFromConfig(config, values.policy, values.config, values.config);
  if (hops !== undefined)
    return chainMatrixCommand(
      base.with({ name: values.policy }),
      { hops, seeds: values.seeds, scenarios: values.scenarios, rate, json: values.json },
      io,
    );
  const variants: Variant[] = [{ label: values.policy, policy: base }];
  for (const spec of values.compare) {
    const policy = policyFromConfig(
      compareConfig(config, values.policy, spec),
      values.policy,
      values.config,
      `--compare ${spec}`,
    );
    variants.push({ label: `${values.policy} (${spec})`, policy });
  }
  if (values.matrix)
    return matrixCommand(
      base.with({ name: values.policy }),
      { seeds: values.seeds, scenarios: values.scenarios, rate, json: values.json },
      io,
      variants.slice(1).map(({ label, policy }) => ({ label, policy })),
    );

  const { dependency, load } = scenario(scenarioName, duration, rate, model);
  const runs: { label: string; report: SimulationReport }[] = [];
  const showProgress = duration >= 60_000;
  for (const variant of variants) {
    const report = await Simulate.policy(variant.policy)
      .against(dependency)
      .under(load)
      .for(duration)
      .run(seed, {
        progressEvery: Math.max(10_000, Math.round(duration / 10 / 1000) * 1000),
        onProgress: showProgress
          ? (at, total) =>
              io.stderr(
                `simulating ${variant.label}: ${Math.round((100 * at) / total)}% (${Math.round(at / 1000)}s of ${Math.round(total / 1000)}s)\n`,
              )
          : undefined,
      });
    runs.push({ label: variant.label, report });
  }

  if (values.json) {
    io.stdout(
      `${JSON.stringify({ scenario: scenarioName, seed, runs: runs.map((r) => ({ label: r.label, report: r.report })) }, null, 2)}\n`,
    );
  } else {
    for (const run of runs) io.stdout(`${run.report.toString()}\n\n`);
    io.stdout(`${summaryTable(runs)}\n`);
  }
  if (values.svg !== undefined) {
    const title = `nresilience simulate — ${values.policy}, scenario ${scenarioName}, ${rate} calls/s, seed ${seed}`;
    try {
      io.writeFile(values.svg, renderChart(runs, title));
    } catch (error) {
      throw new UsageError(
        '--svg',
        values.svg,
        `cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    io.stderr(`chart written to ${values.svg}\n`);
  }
  return 0;
}
