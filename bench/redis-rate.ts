/**
 * The Redis store of a fleet's rate limit against `rate-limiter-flexible` (issue 26 §2: accuracy and
 * Redis round trips), on a real `redis-server` (started on a free loopback port, or `REDIS_URL`).
 * Run on demand: `npm run bench:redis-rate`.
 *
 * The same offered load for both: `CLIENTS` clients (each its own ioredis connection, as separate
 * processes would have) each offer a call every `1000 / PER_CLIENT` ms for `SECONDS` s, sharing one
 * limit of `LIMIT` per second. Measured for each:
 * - accuracy: calls admitted in each 1 s window from the start, the most in any sliding 1 s window
 *   (from the admitted calls' times), and the total against `LIMIT × SECONDS`;
 * - Redis round trips per call: scripts Redis ran (`INFO commandstats`, reset before each run; each
 *   side sends one script per request), and every command run, those inside the scripts included;
 * - the time a call waits before it is admitted (p50 / p99, ms): ours from `tryRun` to the work's
 *   start (a leased token costs no round trip), theirs the `consume` round trip.
 */
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { Limit, Resilience, RetryBudget } from '@nresilience/nestjs/core';
import { RedisRateStore } from '@nresilience/nestjs/redis';
import { startRedis } from '../test/support/redis-server.js';

const LIMIT = Number(process.env.BENCH_LIMIT ?? 200);
const CLIENTS = 4;
const PER_CLIENT = Number(process.env.BENCH_PER_CLIENT ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BURST = LIMIT / 10;

interface Outcome {
  /** ms from the start of the run at which each admitted call started. */
  readonly admitted: number[];
  /** ms each admitted call waited before it started. */
  readonly waits: number[];
  readonly calls: number;
}

/** Offers the load through `call(client, start)`, which resolves whether the call was admitted. */
async function offer(
  call: (client: number) => Promise<{ admitted: boolean; wait: number }>,
): Promise<Outcome> {
  const admitted: number[] = [];
  const waits: number[] = [];
  const pending: Promise<void>[] = [];
  const begin = performance.now();
  const gap = 1000 / PER_CLIENT;
  let calls = 0;
  // One tick per `gap`, each client offering one call; the schedule is by the wall clock, so a slow
  // tick does not lower the offered load.
  for (let k = 0; k * gap < SECONDS * 1000; k++) {
    const due = begin + k * gap;
    const now = performance.now();
    if (due > now) await new Promise((resolve) => setTimeout(resolve, due - now));
    for (let c = 0; c < CLIENTS; c++) {
      calls++;
      pending.push(
        call(c).then(({ admitted: ok, wait }) => {
          if (!ok) return;
          admitted.push(performance.now() - begin - wait);
          waits.push(wait);
        }),
      );
    }
  }
  await Promise.all(pending);
  return { admitted: admitted.sort((a, b) => a - b), waits, calls };
}

/**
 * What Redis ran since the last reset: `trips`, the scripts called (EVALSHA or EVAL: one round trip
 * each, both sides send nothing else per call), and `commands`, every command counted, those run
 * inside the scripts included.
 */
async function commandStats(redis: Redis): Promise<{ trips: number; commands: number }> {
  const text = await redis.info('commandstats');
  let trips = 0;
  let commands = 0;
  for (const match of text.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    const [name, calls] = [match[1]!, Number(match[2])];
    if (['info', 'config', 'ping', 'client', 'hello', 'select', 'flushall'].includes(name))
      continue;
    commands += calls;
    if (name.startsWith('eval')) trips += calls;
  }
  return { trips, commands };
}

function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0
    ? NaN
    : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function mostInOneSecond(times: readonly number[]): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const redis = await startRedis();
const admin = new Redis(redis.url);
const clients = Array.from({ length: CLIENTS }, () => new Redis(redis.url));
const rows: string[][] = [];

async function measure(
  name: string,
  call: (client: number) => Promise<{ admitted: boolean; wait: number }>,
): Promise<void> {
  await admin.flushall();
  await admin.config('RESETSTAT');
  const outcome = await offer(call);
  const { trips, commands } = await commandStats(admin);
  const windows = Array.from(
    { length: SECONDS },
    (_, s) => outcome.admitted.filter((t) => t >= s * 1000 && t < (s + 1) * 1000).length,
  );
  rows.push([
    name,
    String(outcome.calls),
    String(outcome.admitted.length),
    `${((outcome.admitted.length / (LIMIT * SECONDS)) * 100).toFixed(1)}%`,
    `${Math.min(...windows)}–${Math.max(...windows)}`,
    String(mostInOneSecond(outcome.admitted)),
    String(trips),
    (trips / outcome.calls).toFixed(3),
    (trips / Math.max(1, outcome.admitted.length)).toFixed(3),
    (commands / outcome.calls).toFixed(2),
    quantile(outcome.waits, 0.5).toFixed(3),
    quantile(outcome.waits, 0.99).toFixed(3),
  ]);
}

// Ours: every client a policy with the shared limit on its own connection (leases of 10 tokens).
const policies = clients.map((client) =>
  Resilience.default.with({
    name: 'bench-ours',
    attempts: 1,
    budget: RetryBudget.none,
    limit: Limit.rate({
      limit: LIMIT,
      per: 1000,
      burst: BURST,
      store: new RedisRateStore(client),
      expectedInstances: CLIENTS,
    }),
  }),
);
// A warm-up second so both sides start on loaded scripts and connected clients.
await Promise.all(policies.map((p) => p.tryRun(() => undefined)));
await measure('nresilience lease script (lease 10)', async (c) => {
  const start = performance.now();
  let wait = 0;
  const result = await policies[c]!.tryRun(() => {
    wait = performance.now() - start;
  });
  return { admitted: result.ok, wait };
});

// rate-limiter-flexible: one RateLimiterRedis per client on its own connection, the same key.
const limiters = clients.map(
  (storeClient) =>
    new RateLimiterRedis({ storeClient, points: LIMIT, duration: 1, keyPrefix: 'bench-rlf' }),
);
await Promise.all(limiters.map((l) => l.consume('warm', 1).catch(() => undefined)));
await measure('rate-limiter-flexible RateLimiterRedis', async (c) => {
  const start = performance.now();
  try {
    await limiters[c]!.consume('provider', 1);
    return { admitted: true, wait: performance.now() - start };
  } catch {
    return { admitted: false, wait: performance.now() - start };
  }
});

const header = [
  'store',
  'calls',
  'admitted',
  'of limit × s',
  'per 1 s window',
  'most in any 1 s',
  'round trips',
  'per call',
  'per admitted call',
  'commands per call',
  'wait p50 ms',
  'wait p99 ms',
];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: readonly string[]): string =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
console.log(
  `${CLIENTS} clients × ${PER_CLIENT} calls/s for ${SECONDS} s sharing ${LIMIT}/s (burst ${BURST}), redis-server on loopback, Node ${process.version}`,
);
console.log(line(header));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const row of rows) console.log(line(row));

await Promise.all([...clients, admin].map((c) => c.quit()));
await redis.stop();
