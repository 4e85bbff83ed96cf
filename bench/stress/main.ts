/**
 * The stress suite (issue 15, DESIGN §10), on demand: `npm run bench:stress` (after a build,
 * `node dist-sample/bench/stress/main.js [--ms 5000] [--reps 3] [--node PATH] [--peers DIR] [--only K1,K2] [--out DIR]`).
 *
 * Every configuration of `configurations.ts` × `--reps` runs in a fresh client process, in a shuffled
 * order, each against a fresh dependency process on loopback (`dependency.ts`), 80 concurrent callers.
 * Reports per configuration the median over the repetitions of throughput, latency p50/p99, the
 * client's CPU time per operation (the figure a loaded machine moves least), GC pause share, peak heap, and what the dependency felt (requests per operation, retries per operation),
 * and the retry cut of the budget against a half-failing dependency (retries per operation without
 * the budget ÷ with it): the static bucket's target is ≥ 10× (the reference measured 18.9×); the
 * adaptive default funds these retries, which succeed half the time (docs/retry-budget.md), so its cut
 * is near 1×.
 *
 * `--node` runs client and dependency on another Node binary and `--peers` loads cockatiel and opossum
 * from another directory (Node 24 with cockatiel 4 and opossum 10). Writes `stress-node<major>.md` and
 * `.json` into `--out` (default `bench/results/`, gitignored).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { smoke, spread } from '../harness.js';
import { configurations, keyOf } from './configurations.js';

const { values } = parseArgs({
  options: {
    ms: { type: 'string', default: smoke ? '300' : '5000' },
    reps: { type: 'string', default: smoke ? '1' : '3' },
    node: { type: 'string', default: process.execPath },
    peers: { type: 'string' },
    only: { type: 'string' },
    out: {
      type: 'string',
      default: fileURLToPath(new URL('../../../bench/results/', import.meta.url)),
    },
    seed: { type: 'string', default: '15' },
  },
});
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const reps = Number(values.reps);
const node = values.node!;
const only = values.only?.split(',');
const chosen = configurations.filter((c) => only === undefined || only.includes(keyOf(c)));
if (chosen.length === 0)
  throw new Error(`--only matched nothing; keys: ${configurations.map(keyOf).join(', ')}`);

interface Run {
  config: string;
  node: string;
  peers: { cockatiel: string; opossum: string };
  operations: number;
  succeeded: number;
  attempts: number;
  retries: number;
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  gcShare: number;
  /** The client process's CPU time (user + system) per operation, µs. */
  cpuUsPerOp: number;
  peakHeapMb: number;
  rssMb: number;
  dependencyRequests: number;
}

// Shuffled with a seeded generator: a different order than the list's, the same one every run.
let seed = Number(values.seed);
const order = chosen.flatMap((c) => Array.from({ length: reps }, () => keyOf(c)));
for (let i = order.length - 1; i > 0; i--) {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  const j = seed % (i + 1);
  [order[i], order[j]] = [order[j]!, order[i]!];
}

const exec = promisify(execFile);
const runs: Run[] = [];
const began = performance.now();
for (const [index, key] of order.entries()) {
  const configuration = chosen.find((c) => keyOf(c) === key)!;
  const dependency = spawn(
    node,
    [
      here('./dependency.js'),
      '--fail-rate',
      String(configuration.failRate),
      '--seed',
      String(index + 1),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const port = await portOf(dependency);
    const args = [
      here('./client.js'),
      '--config',
      key,
      '--port',
      String(port),
      '--ms',
      values.ms!,
      ...(values.peers === undefined ? [] : ['--peers', values.peers]),
    ];
    const { stdout } = await exec(node, args, {
      timeout: Number(values.ms) + 60_000,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
    });
    const stats = (await (await fetch(`http://127.0.0.1:${port}/__stats`)).json()) as {
      requests: number;
    };
    const run = {
      ...(JSON.parse(stdout.trimEnd().split('\n').at(-1)!) as Omit<Run, 'dependencyRequests'>),
      dependencyRequests: stats.requests,
    };
    runs.push(run);
    console.error(
      `[${index + 1}/${order.length}] ${key}: ${Math.round(run.throughput)} ops/s, p99 ${run.p99Ms.toFixed(1)} ms`,
    );
  } finally {
    dependency.kill('SIGTERM');
  }
}

function portOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.once('exit', (code) => reject(new Error(`dependency exited (${code}) before listening`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const line = seen.split('\n').find((l) => l.startsWith('{'));
      if (line !== undefined) resolve((JSON.parse(line) as { port: number }).port);
    });
  });
}

const median = (xs: number[]) => spread(xs).median;
const summary = chosen.map((c) => {
  const own = runs.filter((r) => r.config === keyOf(c));
  const perOp = (pick: (r: Run) => number) => median(own.map((r) => pick(r) / r.operations));
  return {
    key: keyOf(c),
    library: c.library,
    dependency: c.failRate === 0 ? 'healthy' : `${Math.round(c.failRate * 100)} % failing`,
    note: c.note,
    reps: own.length,
    throughput: median(own.map((r) => r.throughput)),
    throughputRange: [
      Math.min(...own.map((r) => r.throughput)),
      Math.max(...own.map((r) => r.throughput)),
    ],
    successRate: perOp((r) => r.succeeded),
    p50Ms: median(own.map((r) => r.p50Ms)),
    p99Ms: median(own.map((r) => r.p99Ms)),
    gcShare: median(own.map((r) => r.gcShare)),
    cpuUsPerOp: median(own.map((r) => r.cpuUsPerOp)),
    peakHeapMb: median(own.map((r) => r.peakHeapMb)),
    requestsPerOp: perOp((r) => r.dependencyRequests),
    retriesPerOp: perOp((r) => r.retries),
  };
});
const retriesOf = (key: string) => summary.find((s) => s.key === key)?.retriesPerOp;
const withBudget = retriesOf('nresilience-default@fail50');
const withoutBudget = retriesOf('nresilience-no-budget@fail50');
const withStatic = retriesOf('nresilience-static-budget@fail50');
const cutOf = (retries: number | undefined) =>
  retries !== undefined && withoutBudget !== undefined ? withoutBudget / retries : undefined;
const retryCut = cutOf(withBudget);
const staticCut = cutOf(withStatic);
// The budget's trade-off against the half-failing dependency: what it saves the dependency, what it
// costs the callers, beside the same policy without it and cockatiel's plain retry.
const tradeOff = [
  'nresilience-default@fail50',
  'nresilience-static-budget@fail50',
  'nresilience-no-budget@fail50',
  'cockatiel-retry@fail50',
].flatMap((key) => summary.filter((s) => s.key === key));
const wallS = (performance.now() - began) / 1000;
const { stdout: nodeVersion } = await exec(node, ['--version']);
const peers = runs[0]?.peers;

const major = nodeVersion.trim().slice(1).split('.')[0];
const report = {
  node: nodeVersion.trim(),
  peers,
  msPerRun: Number(values.ms),
  reps,
  callers: 80,
  wallSeconds: wallS,
  order,
  retryCut,
  staticCut,
  summary,
  runs,
};
const fixed = (x: number, d = 2) => x.toFixed(d);
const markdown = [
  `# Stress suite — Node ${report.node}, cockatiel ${peers?.cockatiel}, opossum ${peers?.opossum}`,
  '',
  `${order.length} runs (${reps} per configuration, shuffled, fresh client and dependency processes), ${values.ms} ms each, 80 concurrent callers, loopback HTTP; ${fixed(wallS, 0)} s in all. Medians over the repetitions.`,
  '',
  '| configuration | dependency | ops/s (min–max) | success | p50 ms | p99 ms | client CPU µs/op | GC share | peak heap MB | requests/op | retries/op |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...summary.map(
    (s) =>
      `| ${s.key.split('@')[0]} | ${s.dependency} | ${fixed(s.throughput, 0)} (${fixed(s.throughputRange[0]!, 0)}–${fixed(s.throughputRange[1]!, 0)}) | ${fixed(s.successRate * 100, 1)} % | ${fixed(s.p50Ms)} | ${fixed(s.p99Ms)} | ${fixed(s.cpuUsPerOp, 1)} | ${fixed(s.gcShare * 100, 1)} % | ${fixed(s.peakHeapMb, 1)} | ${fixed(s.requestsPerOp, 3)} | ${fixed(s.retriesPerOp, 3)} |`,
  ),
  '',
  retryCut === undefined
    ? 'Retry cut: not measured (a budget configuration was left out).'
    : `Retry cut of the budget against the half-failing dependency (independent failures: retries work, so the adaptive default funds them): ${fixed(withoutBudget!, 3)} → ${fixed(withBudget!, 3)} retries per operation, **${fixed(retryCut, 1)}×**.`,
  ...(staticCut === undefined
    ? []
    : [
        '',
        `Retry cut of the static bucket (RetryBudget.tokenBucket()): ${fixed(withoutBudget!, 3)} → ${fixed(withStatic!, 3)} retries per operation, **${fixed(staticCut, 1)}×** (target ≥ 10×; the reference measured 18.9×).`,
      ]),
  '',
  ...(tradeOff.length === 0
    ? []
    : [
        'The retry budget against the half-failing dependency (success per operation, what the dependency received):',
        '',
        '| configuration | success | requests/op | retries/op |',
        '|---|---|---|---|',
        ...tradeOff.map(
          (s) =>
            `| ${s.key.split('@')[0]} | ${fixed(s.successRate * 100, 1)} % | ${fixed(s.requestsPerOp, 3)} | ${fixed(s.retriesPerOp, 3)} |`,
        ),
        '',
      ]),
  'Configurations:',
  ...summary.map((s) => `- \`${s.key}\`: ${s.note}`),
  '',
].join('\n');
mkdirSync(values.out!, { recursive: true });
writeFileSync(join(values.out!, `stress-node${major}.json`), JSON.stringify(report, null, 2));
writeFileSync(join(values.out!, `stress-node${major}.md`), markdown);
console.log(markdown);
