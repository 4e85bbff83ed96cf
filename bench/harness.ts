/**
 * The one way the benchmarks measure: tinybench, every task in the same process and run, reported as
 * ns per call and as ratios to the first task (the raw awaited call) — never as absolute targets.
 * Each tinybench iteration awaits `BENCH_BATCH` calls in sequence (default 100), so the harness's own
 * per-iteration cost (a timestamp pair and bookkeeping, ~90 ns here) does not dilute the ratios.
 * `BENCH_TIME_MS` sets the time per task (default 1500 ms).
 */
import { Bench } from 'tinybench';

/** A measured task: its name and mean ns per call. */
export interface BenchRow {
  readonly name: string;
  readonly ns: number;
}

/**
 * Runs `tasks` in order and prints a table with `x raw` (ratio to the first task) and, when
 * `against` names another task's index, `x <label>` ratios to it.
 * @returns the rows, in task order
 */
export async function measure(title: string, tasks: ReadonlyArray<readonly [string, () => Promise<unknown>]>, against?: { index: number; label: string }): Promise<BenchRow[]> {
  const time = Number(process.env.BENCH_TIME_MS ?? 1500);
  const batch = Number(process.env.BENCH_BATCH ?? 100);
  const bench = new Bench({ time, warmupTime: 300 });
  for (const [name, fn] of tasks) {
    bench.add(name, async () => {
      for (let i = 0; i < batch; i++) await fn();
    });
  }
  await bench.run();
  const rows = bench.tasks.map((task) => {
    const result = task.result as { latency?: { mean: number } } | undefined;
    return { name: task.name, ns: ((result?.latency?.mean ?? NaN) * 1e6) / batch };
  });
  const raw = rows[0]!.ns;
  const base = against === undefined ? undefined : rows[against.index]!.ns;
  console.log(`${title} — Node ${process.version}, ${time} ms per task, ${batch} calls per iteration`);
  console.table(
    rows.map((row) => ({
      task: row.name,
      'ns/call': row.ns.toFixed(0),
      'x raw': (row.ns / raw).toFixed(2),
      ...(base === undefined ? {} : { [`x ${against!.label}`]: (row.ns / base).toFixed(2) }),
    })),
  );
  return rows;
}
