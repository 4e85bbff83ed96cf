/**
 * One process of the Redis fleet test (test/redis/fleet.e2e-spec.ts), run from dist-sample in a fresh
 * Node process. It connects to `--url`, builds a policy whose rate limit (`--limit` per second, burst
 * `--burst`) is shared through Redis under `--key` by `--instances` processes, prints `ready`, reads the
 * start time from stdin (epoch ms, on the machine's clock, which every process reads alike), then from
 * that time offers one call every `--every` ms for `--ms` ms. At the end it prints one JSON line: the
 * epoch ms of every call offered and every call granted, the limiter's store events with their times,
 * how many calls settled and the longest any call took (ms), the store's round trips and episodes.
 * An unhandled rejection ends it with exit code 1.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Limit, Resilience, RetryBudget, type RateLimiter } from '../lib/core/index.js';
import { connectRedisRateStore } from '../lib/redis/index.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    limit: { type: 'string', default: '200' },
    burst: { type: 'string', default: '10' },
    instances: { type: 'string', default: '4' },
    every: { type: 'string', default: '10' },
    ms: { type: 'string', default: '10000' },
  },
});

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`unhandled rejection: ${String(reason)}\n`);
  process.exit(1);
});

/** Epoch ms, fractional: the same clock in every process of the machine. */
const now = (): number => performance.timeOrigin + performance.now();

const store = await connectRedisRateStore(values.url!, { connectWait: 5000 });
const events: { kind: string; at: number }[] = [];
const policy = Resilience.default
  .with({
    name: 'fleet',
    attempts: 1,
    budget: RetryBudget.none,
    limit: Limit.rate({
      limit: Number(values.limit),
      per: 1000,
      burst: Number(values.burst),
      store,
      key: values.key!,
      expectedInstances: Number(values.instances),
    }),
  })
  .withListener((event) => {
    if (event.kind.startsWith('limiter')) events.push({ kind: event.kind, at: now() });
  });

process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
const start = Number(await new Promise<string>((resolve) => lines.once('line', resolve)));
lines.close();
await new Promise((resolve) => setTimeout(resolve, Math.max(0, start - now())));

const offers: number[] = [];
const grants: number[] = [];
const calls: Promise<void>[] = [];
let longest = 0;
let settled = 0;
const work = (): void => void grants.push(now());
const end = start + Number(values.ms);
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    const offeredAt = now();
    if (offeredAt >= end) {
      clearInterval(timer);
      resolve();
      return;
    }
    offers.push(offeredAt);
    calls.push(
      policy.tryRun(work).then(() => {
        settled++;
        longest = Math.max(longest, now() - offeredAt);
      }),
    );
  }, Number(values.every));
});
await Promise.all(calls);

const shared = (policy.limiter() as RateLimiter).snapshot().shared;
await store.close();
process.stdout.write(
  `${JSON.stringify({
    offers,
    grants,
    events,
    settled,
    longest,
    roundTrips: shared?.roundTrips,
    degradedEpisodes: shared?.degradedEpisodes,
  })}\n`,
);
