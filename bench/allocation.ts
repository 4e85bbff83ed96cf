/**
 * Heap bytes allocated per call on the success path (issue 15, DESIGN §10): each preset against the
 * raw awaited call, in one process. Needs `--expose-gc` and a young generation large enough that no
 * scavenge runs inside a measured loop (`ALLOCATION_FLAGS`):
 *
 *   node --expose-gc --min-semi-space-size=128 --max-semi-space-size=128 dist-sample/bench/allocation.js [--json]
 *
 * Method: warm every loop until optimized; then per round, `gc()`, read `heapUsed`, run N awaited
 * calls, read `heapUsed` again: with no collection in between, the growth is what the N calls
 * allocated. A round during which a scavenge ran (seen through perf_hooks' `gc` entries) is thrown
 * away and repeated. The report is the median over the rounds, and the excess over the raw call.
 * `--json` prints `{ node, calls, rounds, rows: [{ name, bytes, excess, spread }] }` for the gate.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { compileLoop, smoke, spread } from './harness.js';
import { allocationTasks } from './allocation-tasks.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error(
    'allocation bench: run node with --expose-gc (see the header of bench/allocation.ts)',
  );
  process.exit(2);
}

const calls = smoke ? 200 : Number(process.env.BENCH_CALLS ?? 20_000);
const rounds = smoke ? 1 : Number(process.env.BENCH_ROUNDS ?? 7);
const json = process.argv.includes('--json');

let scavenges = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (
      (entry as { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR
    )
      scavenges++;
  }
});
observer.observe({ entryTypes: ['gc'] });
// perf_hooks delivers gc entries asynchronously: a macrotask later they have all arrived.
const settle = () => new Promise((resolve) => setImmediate(resolve));

const tasks = allocationTasks();
const rows = [];
for (const [name, call] of tasks) {
  const run = compileLoop(call);
  for (let warm = 0; warm < (smoke ? 1 : 5); warm++) await run(Math.min(calls, 20_000));
  const bytes: number[] = [];
  for (let attempt = 0; bytes.length < rounds && attempt < rounds * 4; attempt++) {
    gc();
    await settle();
    const before = scavenges;
    const heapBefore = process.memoryUsage().heapUsed;
    await run(calls);
    const heapAfter = process.memoryUsage().heapUsed;
    await settle();
    if (scavenges === before) bytes.push((heapAfter - heapBefore) / calls);
  }
  if (bytes.length === 0)
    throw new Error(
      `allocation bench: a scavenge ran in every round of "${name}"; give node a larger --max-semi-space-size`,
    );
  rows.push({ name, spread: spread(bytes) });
}
observer.disconnect();

const raw = rows[0]!.spread.median;
const report = {
  node: process.version,
  calls,
  rounds,
  rows: rows.map((row) => ({
    name: row.name,
    bytes: round(row.spread.median),
    excess: round(row.spread.median - raw),
    spread: { min: round(row.spread.min), max: round(row.spread.max) },
  })),
};
if (json) console.log(JSON.stringify(report));
else {
  console.log(
    `\nHeap bytes per call — Node ${process.version}, ${rounds} rounds × ${calls} calls, median (min–max)`,
  );
  console.table(
    report.rows.map((row) => ({
      task: row.name,
      'bytes/call': row.bytes,
      'over raw': row.excess,
      range: `${row.spread.min}–${row.spread.max}`,
    })),
  );
}

function round(bytes: number): number {
  return Math.round(bytes * 10) / 10;
}
