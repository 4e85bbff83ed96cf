/**
 * Instructions per call of each success-path task, counted by valgrind's cachegrind: a count other
 * processes' load cannot move, for before/after figures on a shared machine. On demand (valgrind
 * installed), after `npm run build`:
 *
 *   node dist-sample/bench/instructions.js [task…]
 *
 * Per task, two child processes run under `valgrind --tool=cachegrind --cache-sim=no`, each warming
 * the task up (`BENCH_WARM`, 20 000 calls) and then making `BENCH_N1` (20 000) or `BENCH_N2`
 * (220 000) more awaited calls; instructions per call = (I refs of the second − I refs of the first)
 * ÷ (N2 − N1), so start-up, warm-up and optimisation cancel out. `BENCH_CORE` (a built
 * `dist/core/index.js`) measures another build's presets; the floors are always this build's.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { breakerFloor, defaultFloor, httpFloor } from './floors.js';
import { type Core, presets } from './presets.js';
import { breakerOnly } from './allocation-tasks.js';
import { Resilience } from '@nresilience/nestjs/core';

/** The tasks by name: the presets of `core`, then this build's floors. */
function tasks(core: Core): Record<string, () => unknown> {
  return { ...presets(core), ...floors };
}

// Each floor on a policy instance of its own (its own budget, breaker and measurements).
const floors = {
  floorDefault: defaultFloor(Resilience.default.with({})),
  floorBreaker: breakerFloor(breakerOnly.with({})),
  floorHttp: httpFloor(Resilience.http.with({})),
};

async function child(name: string, calls: number): Promise<void> {
  const corePath = process.env.BENCH_CORE;
  const core: Core =
    corePath === undefined
      ? await import('@nresilience/nestjs/core')
      : ((await import(pathToFileURL(corePath).href)) as Core);
  const call = tasks(core)[name];
  if (call === undefined) throw new Error(`unknown task ${name}`);
  const warm = Number(process.env.BENCH_WARM ?? 20_000);
  for (let i = 0; i < warm; i++) await call();
  for (let i = 0; i < calls; i++) await call();
}

/** Instructions the process ran (cachegrind's `I refs`) for `calls` calls of `name`. */
function instructions(name: string, calls: number): number {
  const self = fileURLToPath(import.meta.url);
  const run = spawnSync(
    'valgrind',
    [
      '--tool=cachegrind',
      '--cache-sim=no',
      '--cachegrind-out-file=/dev/null',
      process.execPath,
      self,
      '--child',
      name,
      String(calls),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const output = run.stderr;
  if (run.status !== 0) throw new Error(`valgrind failed (${run.status}):\n${output}`);
  const match = /I\s+refs:\s+([\d,]+)/.exec(output);
  if (match === null) throw new Error(`no I refs in valgrind's output:\n${output}`);
  return Number(match[1]!.replaceAll(',', ''));
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  await child(args[1]!, Number(args[2]));
} else {
  const n1 = Number(process.env.BENCH_N1 ?? 20_000);
  const n2 = Number(process.env.BENCH_N2 ?? 220_000);
  const names =
    args.length > 0 ? args : Object.keys(tasks(await import('@nresilience/nestjs/core')));
  const rows: Record<string, string>[] = [];
  let raw: number | undefined;
  for (const name of names) {
    const perCall = (instructions(name, n2) - instructions(name, n1)) / (n2 - n1);
    if (name === 'raw') raw = perCall;
    rows.push({
      task: name,
      'instructions per call': perCall.toFixed(0),
      'x raw': raw === undefined ? '' : (perCall / raw).toFixed(2),
    });
  }
  console.log(
    `Instructions per call — Node ${process.version}; (I refs(${n2}) − I refs(${n1})) ÷ ${n2 - n1}` +
      (process.env.BENCH_CORE === undefined ? '' : `; core ${process.env.BENCH_CORE}`),
  );
  console.table(rows);
}
