import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { type TestRedis, startRedis } from '../support/redis-server.js';

/**
 * The fleet test: 4 Node processes (bench/fleet-member.ts, from dist-sample: `npm test` builds first)
 * share `limit: 200/s` (burst 10) through one real Redis. Each offers a call every 10 ms (4 × 100/s:
 * twice the limit). Redis runs for 10 s, is killed (SIGKILL) for 4 s, then restarted empty for 4 s.
 * Every time is an epoch ms read in the process that saw it (one machine, one clock).
 *
 * What load can and cannot change: a loaded machine makes the processes offer fewer calls, and it
 * makes them spend leased tokens late. Tokens leased before a stall and spent after it land in a later
 * second: with two busy loops beside the test a window held 225 after one of 162, the 10 s still 1981.
 * So the 10 s totals are bounded under any load (no token is leased before the start, and Redis
 * grants at most burst + 200/s); a 1 s window's upper bound is stated where every process was live in
 * it and in the second before (nothing carried in), its lower bound where every process was live in it.
 */
const member = fileURLToPath(new URL('../../dist-sample/bench/fleet-member.js', import.meta.url));
const LIMIT = 200;
const PROCESSES = 4;
const SHARED_MS = 10_000;
const DOWN_MS = 4000;
const BACK_MS = 4500;
/**
 * A process is live in a window when it offered at least 80 of its 100 calls there with no gap over
 * 30 ms between two: it asked for every token it could get and spent each one as it came (a gap of
 * g ms moves about 50/s × g of its tokens past the gap).
 */
const LIVE = { offers: 80, gap: 30 };

interface Report {
  offers: number[];
  grants: number[];
  events: { kind: string; at: number }[];
  settled: number;
  longest: number;
  roundTrips: number;
  degradedEpisodes: number;
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(() => redis.stop());

/** Starts one member; resolves once it is connected and waiting for the start time. */
async function launch(key: string): Promise<{ child: ChildProcess; report: Promise<Report> }> {
  const child = spawn(
    process.execPath,
    [member, '--url', redis.url, '--key', key, '--ms', String(SHARED_MS + DOWN_MS + BACK_MS)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ready = new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.startsWith('ready\n')) resolve();
    });
  });
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const report = exited.then(([code]) => {
    if (code !== 0) throw new Error(`fleet member exited ${String(code)}: ${stderr}`);
    return JSON.parse(stdout.slice('ready\n'.length)) as Report;
  });
  report.catch(() => undefined);
  await Promise.race([ready, report]);
  return { child, report };
}

/** Whether the process offering at `offers` (ascending) was live in each 1 s window from `from` (see {@link LIVE}). */
function liveWindows(offers: number[], from: number, n: number): boolean[] {
  return Array.from({ length: n }, (_, k) => {
    const begin = from + k * 1000;
    const end = begin + 1000;
    const inside = offers.filter((t) => t >= begin && t < end);
    const times = [begin, ...inside, end];
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    return inside.length >= LIVE.offers && Math.max(...gaps) <= LIVE.gap;
  });
}

/** Counts of `times` in the 1 s windows [from + k s, from + (k + 1) s) for k < n. */
function perSecond(times: number[], from: number, n: number): number[] {
  const counts = new Array<number>(n).fill(0);
  for (const t of times) {
    const k = Math.floor((t - from) / 1000);
    if (k >= 0 && k < n) counts[k]!++;
  }
  return counts;
}

const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const epoch = (): number => performance.timeOrigin + performance.now();

describe('a fleet of 4 processes sharing 200/s through one real Redis', () => {
  it('holds 200 ± 5 % in every 1 s window; Redis killed: each carries on at its 50/s share within 2 s, no call hangs; Redis back: shared again within 2 s', async () => {
    const key = `fleet-${process.pid}-${Math.round(epoch())}`;
    const members = await Promise.all(Array.from({ length: PROCESSES }, () => launch(key)));
    const start = epoch() + 300;
    for (const { child } of members) child.stdin!.end(`${start}\n`);
    await at(start + SHARED_MS - epoch());
    const killedAt = epoch();
    await redis.kill();
    await at(killedAt + DOWN_MS - epoch());
    await redis.restart();
    const backAt = epoch();
    const reports = await Promise.all(members.map(({ report }) => report));

    const allGrants = reports.flatMap((r) => r.grants);
    // Per window from `from`: whether every process was live in it, and in it and the one before.
    const liveIn = (from: number, n: number, freshStart = false) => {
      const each = reports.map((r) => liveWindows(r.offers, from - 1000, n + 1));
      const live = Array.from({ length: n + 1 }, (_, k) => each.every((w) => w[k]));
      if (freshStart) live[0] = true;
      return {
        live: live.slice(1),
        steady: live.slice(1).map((now, k) => now && live[k]!),
      };
    };
    const downFrom = killedAt + 2000;
    const downWindows = Math.floor((backAt - downFrom) / 1000);
    const backFrom = backAt + 2000;
    const backWindows = Math.floor((start + SHARED_MS + DOWN_MS + BACK_MS - backFrom) / 1000);
    // When each process first reported `kind` after the kill (NaN: never).
    const eventAt = (kind: string) =>
      reports.map((r) => r.events.find((e) => e.kind === kind && e.at >= killedAt)?.at ?? NaN);
    const figures = {
      killedAt: Math.round(killedAt - start),
      backAt: Math.round(backAt - start),
      shared: perSecond(allGrants, start, 10),
      sharedLive: liveIn(start, 10, true),
      leaving: perSecond(allGrants, killedAt, 2),
      degradedAfter: eventAt('limiterDegraded').map((t) => Math.round(t - killedAt)),
      down: reports.map((r) => perSecond(r.grants, downFrom, downWindows)),
      downLive: reports.map((r) => liveWindows(r.offers, downFrom, downWindows)),
      // From Redis answering the parent's PING (a process may see it a few ms before the parent).
      recoveredAfter: eventAt('limiterRecovered').map((t) => Math.round(t - backAt)),
      returning: perSecond(allGrants, backAt, 2),
      back: perSecond(allGrants, backFrom, backWindows),
      backLive: liveIn(backFrom, backWindows),
      grants: reports.map((r) => r.grants.length),
      roundTrips: reports.map((r) => r.roundTrips),
      longest: reports.map((r) => Math.round(r.longest)),
    };
    process.stdout.write(`fleet: ${JSON.stringify(figures)}\n`);

    // No call hangs: every call offered settled, none took a second (a grant runs at once, a refusal
    // comes after the 100 ms guarded pause; a call waits on Redis at most storeWait, 5 ms).
    for (const r of reports) {
      expect(r.settled).toBe(r.offers.length);
      expect(r.longest).toBeLessThan(1000);
    }

    // Shared: 2000 ± 5 % over the 10 s (at most 2100 under any load); each 1 s window 200 ± 5 % where
    // the processes were live (the first window only its upper bound: the first calls find no lease).
    const sharedTotal = figures.shared.reduce((a, b) => a + b, 0);
    expect(sharedTotal).toBeLessThanOrEqual(10 * LIMIT * 1.05);
    if (figures.sharedLive.live.every(Boolean))
      expect(sharedTotal).toBeGreaterThanOrEqual(10 * LIMIT * 0.95);
    for (const [k, n] of figures.shared.entries()) {
      if (figures.sharedLive.steady[k]) expect(n).toBeLessThanOrEqual(LIMIT * 1.05);
      if (k > 0 && figures.sharedLive.live[k]) expect(n).toBeGreaterThanOrEqual(LIMIT * 0.95);
    }

    // Killed: each process reports limiterDegraded within 2 s, then runs on its share, 50/s ± 5 %:
    // a local bucket (burst 2) holds no lease, so its upper bound holds under any load.
    for (const after of figures.degradedAfter) expect(after).toBeLessThanOrEqual(2000);
    const share = LIMIT / PROCESSES;
    expect(downWindows).toBeGreaterThanOrEqual(1);
    for (const [i, counts] of figures.down.entries()) {
      for (const [k, n] of counts.entries()) {
        expect(n).toBeLessThanOrEqual(share * 1.05);
        if (figures.downLive[i]![k]) expect(n).toBeGreaterThanOrEqual(share * 0.95);
      }
    }

    // Back: each process reports limiterRecovered within 2 s; the fleet holds 200 ± 5 % again.
    for (const after of figures.recoveredAfter) expect(after).toBeLessThanOrEqual(2000);
    expect(backWindows).toBeGreaterThanOrEqual(1);
    for (const [k, n] of figures.back.entries()) {
      if (figures.backLive.steady[k]) expect(n).toBeLessThanOrEqual(LIMIT * 1.05);
      if (figures.backLive.live[k]) expect(n).toBeGreaterThanOrEqual(LIMIT * 0.95);
    }
  }, 60_000);
});
