/**
 * The success path (and a retry) of this build against another build of the core, in one process:
 * how a change to the executor moves each preset. On demand, not part of `npm run bench`:
 *
 *   git worktree add /tmp/before main && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   (cd /tmp/before && npx tsc -p tsconfig.build.json)
 *   npm run build && BENCH_BEFORE=/tmp/before/dist/core/index.js node dist-sample/bench/before-after.js
 *
 * Method: per preset, `BENCH_ROUNDS` (80) pairs of runs of `BENCH_CALLS` (10,000) awaited calls,
 * the order within a pair alternating. Each run is timed in CPU time of this process (user + system),
 * not wall time, so the load other processes put on a shared machine moves it much less. Reported:
 * the 10th-percentile ns per call of each side, each side's ratio to the raw awaited call (the first
 * row, measured the same way), their ratio, and the median of the pairs' ratios with its 25th–75th
 * percentile. Without `BENCH_BEFORE` the build is compared with itself (every ratio then reads how
 * much the machine's noise alone moves it).
 */
import { pathToFileURL } from 'node:url';
import * as current from '@nresilience/nestjs/core';
import { compileLoop, cpuTime } from './harness.js';
import { type Core, presets } from './presets.js';

const beforePath = process.env.BENCH_BEFORE;
const before: Core =
  beforePath === undefined ? current : ((await import(pathToFileURL(beforePath).href)) as Core);
const rounds = Number(process.env.BENCH_ROUNDS ?? 80);
const calls = Number(process.env.BENCH_CALLS ?? 10_000);

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))]!;
}

const old = presets(before);
const now = presets(current);
const rows = [];
let rawBefore = 0;
let rawAfter = 0;
for (const name of Object.keys(now)) {
  const runBefore = compileLoop(old[name]!, cpuTime);
  const runAfter = compileLoop(now[name]!, cpuTime);
  for (let warm = 0; warm < 3; warm++) {
    await runBefore(calls);
    await runAfter(calls);
  }
  const beforeNs: number[] = [];
  const afterNs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const afterFirst = round % 2 === 1;
    const a = afterFirst ? await runAfter(calls) : await runBefore(calls);
    const b = afterFirst ? await runBefore(calls) : await runAfter(calls);
    const [tb, ta] = afterFirst ? [b, a] : [a, b];
    beforeNs.push(tb / calls);
    afterNs.push(ta / calls);
    ratios.push(ta / tb);
  }
  const p10Before = quantile(beforeNs, 0.1);
  const p10After = quantile(afterNs, 0.1);
  if (name === 'raw') {
    rawBefore = p10Before;
    rawAfter = p10After;
  }
  rows.push({
    preset: name,
    'before ns (p10)': p10Before.toFixed(0),
    'after ns (p10)': p10After.toFixed(0),
    'before × raw': (p10Before / rawBefore).toFixed(2),
    'after × raw': (p10After / rawAfter).toFixed(2),
    'after / before (p10)': (p10After / p10Before).toFixed(3),
    'pair ratio median (p25–p75)': `${quantile(ratios, 0.5).toFixed(3)} (${quantile(ratios, 0.25).toFixed(3)}–${quantile(ratios, 0.75).toFixed(3)})`,
  });
}
console.log(
  `Before/after — Node ${process.version}; before: ${beforePath ?? 'this build'}; ${rounds} pairs × ${calls} calls, CPU time`,
);
console.table(rows);
