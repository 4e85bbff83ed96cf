import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ALLOCATION_FLAGS } from '../bench/allocation-flags.js';

/**
 * CI smoke of every bench (issue 15): each built bench runs with `BENCH_SMOKE=1` (a tiny N) and must
 * exit 0 and print its report, so none rots between on-demand runs. No timing is asserted: the
 * numbers of a smoke run mean nothing.
 */

const run = promisify(execFile);
const built = (name: string) =>
  fileURLToPath(new URL(`../dist-sample/bench/${name}`, import.meta.url));

async function smoke(script: string, flags: string[] = [], args: string[] = []): Promise<string> {
  const { stdout } = await run(process.execPath, [...flags, built(script), ...args], {
    env: { ...process.env, BENCH_SMOKE: '1' },
    timeout: 60_000,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 22,
  });
  return stdout;
}

describe('bench smoke (BENCH_SMOKE=1)', () => {
  it('success path prints both harnesses for every task', async () => {
    const out = await smoke('success-path.js');
    expect(out).toContain('sequential: 1 interleaved rounds');
    expect(out).toMatch(/calls \((wall|CPU) time\)/);
    expect(out).toContain('seq x floor');
    for (const task of [
      'raw await',
      'every feature off',
      'Resilience.default',
      'breaker only',
      'Resilience.http',
      'cockatiel 3.2.1: retry',
      'opossum 9: breaker + timeout',
      'floor of Resilience.default',
      'floor of breaker only',
      'floor of Resilience.http',
    ]) {
      expect(out).toContain(task);
    }
  }, 65_000);

  it('breaker bench prints the breaker cost', async () => {
    expect(await smoke('breaker.js')).toMatch(/breaker admission \+ recording: -?\d+ ns\/call/);
  }, 65_000);

  it('telemetry bench counts the calls it instrumented', async () => {
    const out = await smoke('telemetry.js');
    expect(out).toMatch(/recorded: [1-9]\d* calls, [1-9]\d* attempts/);
    // The SDK's floors, the last with the span content our observer writes.
    expect(out).toContain('OpenTelemetry SDK floor: the work + histogram record + 2 counters');
    expect(out).toContain('OpenTelemetry SDK floor: the same + the span content ours writes');
  }, 65_000);

  it('http body bench reports every task for both workloads', async () => {
    const out = await smoke('http-body.js');
    expect(out.match(/^ {2}.*µs/gm)).toHaveLength(12);
    expect(out).toContain('POST, small JSON answer');
    expect(out).toContain('GET, 1 MiB body in 16 KiB writes');
    expect(out).toContain('resilient fetch, gap bound as before (timer per chunk)');
  }, 65_000);

  it('simulation bench reports both policies', async () => {
    const out = await smoke('simulation.js');
    expect(out).toContain('Resilience.default (budget on)');
    expect(out).toContain('RetryBudget.none (budget off)');
  }, 65_000);

  it('allocation bench reports bytes for the raw call and every preset', async () => {
    const { rows } = JSON.parse(
      (await smoke('allocation.js', ALLOCATION_FLAGS, ['--json'])).trimEnd().split('\n').at(-1)!,
    ) as { rows: { name: string }[] };
    expect(rows.map((row) => row.name)).toEqual([
      'raw',
      'featuresOff',
      'default',
      'breakerOnly',
      'http',
      'loopOnly',
      'freeSlot',
      'breakerFreeSlot',
      'hedgedArmed',
    ]);
  }, 65_000);

  it('hedging bench: a hedge whose threshold is armed but never reached arms one timer per call and clears it', async () => {
    const out = await smoke('hedging.js');
    expect(out).toContain('Resilience.default + Hedge.at(0.95), threshold armed');
    expect(out).toContain('timers per call: 1.000 armed, 1.000 cleared, 0 fired (200 calls;');
  }, 65_000);

  it('stress suite runs client and dependency processes and writes its reports', async () => {
    const out = mkdtempSync(join(tmpdir(), 'nresilience-stress-'));
    const only = [
      'nresilience-default@fail50',
      'nresilience-no-budget@fail50',
      'cockatiel-full@healthy',
      'opossum@healthy',
    ];
    await smoke('stress/main.js', [], ['--only', only.join(','), '--out', out]);
    const report = JSON.parse(
      readFileSync(join(out, `stress-node${process.versions.node.split('.')[0]}.json`), 'utf8'),
    ) as {
      summary: { key: string; throughput: number; requestsPerOp: number; cpuUsPerOp: number }[];
      retryCut: number;
    };
    // Healthy configurations first, then the half-failing ones (the order of configurations.ts).
    expect(report.summary.map((s) => s.key)).toEqual([
      'cockatiel-full@healthy',
      'opossum@healthy',
      'nresilience-default@fail50',
      'nresilience-no-budget@fail50',
    ]);
    for (const row of report.summary) {
      expect(row.throughput).toBeGreaterThan(0);
      // The client's CPU time per operation, what a loaded machine moves least.
      expect(row.cpuUsPerOp).toBeGreaterThan(0);
    }
    // A 300 ms run says nothing about the size of the cut (the bucket starts full); only that it is reported.
    expect(report.retryCut).toEqual(expect.any(Number));
    const markdown = readFileSync(
      join(out, `stress-node${process.versions.node.split('.')[0]}.md`),
      'utf8',
    );
    expect(markdown).toContain('Retry cut of the budget');
    expect(markdown).toContain('| client CPU µs/op |');
  }, 65_000);

  it('Nest route bench loads both routes and reports the ratio', async () => {
    expect(await smoke('nest-route/main.js')).toMatch(/resilient ÷ plain: throughput \d+\.\d+×/);
  }, 65_000);
});
