/**
 * The one way the benchmarks measure time: every task in the same process and run, reported as ns
 * per call and as ratios to the first task (the raw awaited call) — never as absolute targets.
 *
 * Two harnesses, both reported (issue 15):
 * - sequential: one awaited call at a time, `BENCH_CALLS` calls per task per round (default 100,000),
 *   `BENCH_ROUNDS` interleaved rounds (default 9; the task order rotates each round, and the raw task
 *   runs between every two tasks). Each ratio is taken against the raw runs just around it, so a
 *   neighbour's load burst moves numerator and denominator together; the report is the median ratio
 *   with its min–max over the rounds.
 * - batched: tinybench, each iteration awaiting `BENCH_BATCH` calls in sequence (default 100), so the
 *   harness's per-iteration bookkeeping does not dilute the ratios; `BENCH_TIME_MS` per task (default 1500).
 *
 * Every task runs in a loop compiled for it alone (`new Function` with a unique source), so its call
 * site stays monomorphic: a loop shared by all tasks turns megamorphic and bills every task, the raw
 * call included, for the dispatch.
 *
 * `BENCH_METER=cpu` times the sequential harness in this process's CPU time (user + system) instead of
 * wall time: on a machine other processes load, wall time moves with their load, CPU time much less.
 *
 * `BENCH_SMOKE=1` (the CI smoke in `npm test`) runs every harness with a tiny N: it proves the bench
 * runs, its numbers mean nothing.
 */
import { Bench } from 'tinybench';

/** A task: its name and the call it makes (awaited once per call). */
export type BenchTask = readonly [name: string, call: () => unknown];

/** One task's figures from both harnesses. */
export interface BenchRow {
  readonly name: string;
  /** Sequential harness: median ns per call over the rounds. */
  readonly ns: number;
  /** Sequential harness: median, min and max of the per-round ratio to the raw task (or `against`). */
  readonly ratio: Spread;
  /** Batched harness (tinybench): mean ns per call and its ratio to the raw task's. */
  readonly batchedNs: number;
  readonly batchedRatio: number;
}

/** Median and range of a set of readings. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** True under the CI smoke (`BENCH_SMOKE=1`): tiny N, no meaningful numbers. */
export const smoke = process.env.BENCH_SMOKE === '1';

/** Median and range of `values` (not mutated). */
export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** `1.23× (1.20–1.31)` */
export function formatSpread(s: Spread, digits = 2): string {
  return `${s.median.toFixed(digits)}× (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

let loops = 0;

/**
 * What a loop is timed with: called with no argument before the loop (returns a mark) and with that
 * mark after it (returns the elapsed nanoseconds).
 */
export type Meter = (mark?: unknown) => unknown;

/** Wall time (the default meter). */
export const wallTime: Meter = (mark) =>
  mark === undefined ? process.hrtime.bigint() : Number(process.hrtime.bigint() - (mark as bigint));

/** CPU time of this process, user + system: moved less than wall time by other processes' load. */
export const cpuTime: Meter = (mark) => {
  if (mark === undefined) return process.cpuUsage();
  const used = process.cpuUsage(mark as NodeJS.CpuUsage);
  return (used.user + used.system) * 1000;
};

/**
 * A loop of `calls` awaited calls of `call`, compiled for this task alone (see the module note).
 * Resolves with the elapsed nanoseconds by `meter` (wall time by default).
 */
export function compileLoop(
  call: () => unknown,
  meter: Meter = wallTime,
): (calls: number) => Promise<number> {
  const make = new Function(
    'call',
    'meter',
    `/* loop ${loops++} */ return async function (calls) {
       const start = meter();
       for (let i = 0; i < calls; i++) await call();
       return meter(start);
     };`,
  ) as (call: () => unknown, meter: Meter) => (calls: number) => Promise<number>;
  return make(call, meter);
}

/**
 * The sequential harness alone. Each round runs every task once, in an order rotated by the round,
 * with the raw task (index 0) run between every two tasks: a task's ratio in that round is to the mean
 * of the raw runs just before and just after it, so a neighbour's load burst moves both sides.
 * @returns per task, its ns per call and its ratio to the raw call, one entry per round
 */
export async function sequentialRounds(
  tasks: readonly BenchTask[],
  rounds: number,
  calls: number,
): Promise<{ ns: number[][]; ratio: number[][] }> {
  const meter = process.env.BENCH_METER === 'cpu' ? cpuTime : wallTime;
  const runs = tasks.map(([, call]) => compileLoop(call, meter));
  const ns: number[][] = tasks.map(() => []);
  const ratio: number[][] = tasks.map(() => []);
  // Warm-up: every loop reaches its optimized tier before anything is recorded.
  for (const run of runs) await run(Math.min(calls, 20_000));
  const raw = async () => (await runs[0]!(calls)) / calls;
  for (let round = 0; round < rounds; round++) {
    let before = await raw();
    ns[0]!.push(before);
    ratio[0]!.push(1);
    for (let k = 0; k < runs.length - 1; k++) {
      const index = 1 + ((k + round) % (runs.length - 1));
      const taken = (await runs[index]!(calls)) / calls;
      const after = await raw();
      ns[index]!.push(taken);
      ratio[index]!.push(taken / ((before + after) / 2));
      before = after;
    }
  }
  return { ns, ratio };
}

/**
 * Runs `tasks` under both harnesses and prints one table: the sequential median ns and ratio with
 * its min–max, and the batched ns and ratio. Ratios are to the first task, and also, when `against`
 * is given, in a `x <label>` column: to the task at `against.index`, or per task to the task at
 * `against.index[i]` (an array; `undefined` leaves the task's cell empty).
 * @returns the rows, in task order
 */
export async function measure(
  title: string,
  tasks: readonly BenchTask[],
  against?: { index: number | readonly (number | undefined)[]; label: string },
): Promise<BenchRow[]> {
  const rounds = smoke ? 1 : Number(process.env.BENCH_ROUNDS ?? 9);
  const calls = smoke ? 50 : Number(process.env.BENCH_CALLS ?? 100_000);
  const time = smoke ? 5 : Number(process.env.BENCH_TIME_MS ?? 1500);
  const batch = smoke ? 5 : Number(process.env.BENCH_BATCH ?? 100);

  const sequential = await sequentialRounds(tasks, rounds, calls);
  const perRoundRatio = (index: number, base: number) =>
    base === 0
      ? sequential.ratio[index]!
      : sequential.ratio[index]!.map((ratio, round) => ratio / sequential.ratio[base]![round]!);

  const bench = new Bench({ time, warmupTime: smoke ? 1 : 300 });
  for (const [name, call] of tasks) {
    const run = compileLoop(call);
    bench.add(name, () => run(batch));
  }
  await bench.run();
  const batched = bench.tasks.map((task) => {
    const result = task.result as { latency?: { mean: number } } | undefined;
    return ((result?.latency?.mean ?? NaN) * 1e6) / batch;
  });

  const againstOf = (index: number): number | undefined =>
    against === undefined
      ? undefined
      : typeof against.index === 'number'
        ? against.index
        : against.index[index];
  const rows: BenchRow[] = tasks.map(([name], index) => ({
    name,
    ns: spread(sequential.ns[index]!).median,
    ratio: spread(perRoundRatio(index, 0)),
    batchedNs: batched[index]!,
    batchedRatio: batched[index]! / batched[0]!,
  }));
  console.log(
    `${title} — Node ${process.version}; sequential: ${rounds} interleaved rounds × ${calls} calls (${process.env.BENCH_METER === 'cpu' ? 'CPU' : 'wall'} time), median (min–max); ` +
      `batched: tinybench ${time} ms per task, ${batch} calls per iteration`,
  );
  console.table(
    rows.map((row, index) => {
      const base = againstOf(index);
      return {
        task: row.name,
        'seq ns': row.ns.toFixed(0),
        'seq x raw': formatSpread(row.ratio),
        ...(against === undefined
          ? {}
          : {
              [`seq x ${against.label}`]:
                base === undefined ? '' : formatSpread(spread(perRoundRatio(index, base))),
            }),
        'batch ns': row.batchedNs.toFixed(0),
        'batch x raw': row.batchedRatio.toFixed(2),
        ...(against === undefined
          ? {}
          : {
              [`batch x ${against.label}`]:
                base === undefined ? '' : (row.batchedNs / batched[base]!).toFixed(2),
            }),
      };
    }),
  );
  return rows;
}
