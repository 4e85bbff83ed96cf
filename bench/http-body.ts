/**
 * CPU cost of the resilient fetch's gap-bounded response body (DESIGN §5), against a bare `fetch` in
 * the same run: a POST with a small JSON answer, and a 1 MiB GET written in 16 KiB pieces and read to its end.
 * The server runs in a child process, so only the client's CPU (`process.cpuUsage`) is counted.
 * Each round runs every task once in a rotated order with the bare fetch between every two; a
 * task's ratio is to the mean of the bare runs around it, and the report is the median over rounds.
 *
 * Tasks: bare `fetch`; the resilient fetch without a gap bound; the two pieces the bound adds, apart —
 * a `Response` copy over the same native body, then a copy over a JS stream that pulls on demand
 * with no timer; the gap bound itself (one timer per body, re-armed by due time); and the resilient
 * fetch without a bound whose response is wrapped by the previous implementation (a timer set and
 * cleared per chunk, kept here as the "before").
 *
 * Run on demand, after `npm run build`: `node dist-sample/bench/http-body.js`
 * (`BENCH_ROUNDS`, default 7; `BENCH_REQUESTS`, default 1500 per task per round). Not part of `npm test`
 * beyond its smoke run.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  AttemptStalledError,
  type Clock,
  Resilience,
  RetryBudget,
  SystemClock,
} from '@nresilience/nestjs/core';
import { createResilientFetch } from '@nresilience/nestjs/http';
import { compileLoop, cpuTime, smoke, spread, formatSpread } from './harness.js';

const SERVER = `
const http = require('node:http');
const small = JSON.stringify({ ok: true, id: 'order-42', amount: 4200, currency: 'EUR', items: [1, 2, 3] });
const big = Buffer.alloc(1 << 20, 7);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': big.length });
      for (let i = 0; i < big.length; i += 16384) res.write(big.subarray(i, i + 16384));
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(small) });
    res.end(small);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0)).resume();
`;

/** A copy of `response` over `body`, as the gap bound makes it (status, headers, url kept). */
function rewrap(response: Response, body: ReadableStream<Uint8Array> | null): Response {
  const copy = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(copy, 'url', { value: response.url });
  return copy;
}

/** A JS-level stream pulling from `source` on demand, with no timer: the wrapper's own cost. */
function passThrough(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      pull: (controller) =>
        reader
          .read()
          .then(({ done, value }) => (done ? controller.close() : controller.enqueue(value))),
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** The gap bound as it was before: a timer set and cleared around every read. */
function perChunkGapBound(response: Response, gap: number, clock: Clock): Response {
  const source = response.body!;
  const reader = source.getReader();
  let received = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        return new Promise<void>((resolve) => {
          let stalled = false;
          const timer = clock.setTimer(gap, () => {
            stalled = true;
            const error = new AttemptStalledError(gap, received);
            controller.error(error);
            reader.cancel(error).catch(() => undefined);
            resolve();
          });
          reader.read().then(
            ({ done, value }) => {
              clock.clearTimer(timer);
              if (stalled) return;
              if (done) controller.close();
              else {
                received += value.byteLength;
                controller.enqueue(value);
              }
              resolve();
            },
            (error: unknown) => {
              clock.clearTimer(timer);
              if (!stalled) controller.error(error);
              resolve();
            },
          );
        });
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return rewrap(response, body);
}

const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
const [line] = (await once(child.stdout!, 'data')) as [Buffer];
const base = `http://127.0.0.1:${String(line).trim()}`;

const policy = Resilience.default.with({ name: 'bench', budget: RetryBudget.none });
const unbounded = createResilientFetch({ policy });
const bounded = createResilientFetch({ policy, bodyGapTimeout: 5000 });
const clock = SystemClock.instance;
const post: RequestInit = {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: '{"amount":42}',
};

type Read = (response: Response) => Promise<unknown>;
const json: Read = (response) => response.json();
const bytes: Read = (response) => response.arrayBuffer();

function tasks(
  path: string,
  init: RequestInit | undefined,
  read: Read,
): [string, () => Promise<unknown>][] {
  const url = `${base}${path}`;
  return [
    ['bare fetch', async () => read(await fetch(url, init))],
    ['resilient fetch, no gap bound', async () => read(await unbounded(url, init))],
    [
      '  + a Response copy over the same native body',
      async () => {
        const response = await unbounded(url, init);
        return read(rewrap(response, response.body));
      },
    ],
    [
      '  + a copy over a JS stream pulling on demand (no timer)',
      async () => {
        const response = await unbounded(url, init);
        return read(rewrap(response, passThrough(response.body!)));
      },
    ],
    ['resilient fetch, gap bound (one timer per body)', async () => read(await bounded(url, init))],
    [
      'resilient fetch, gap bound as before (timer per chunk)',
      async () => read(perChunkGapBound(await unbounded(url, init), 5000, clock)),
    ],
  ];
}

const rounds = smoke ? 1 : Number(process.env.BENCH_ROUNDS ?? 7);
const requests = smoke ? 5 : Number(process.env.BENCH_REQUESTS ?? 1500);

async function report(
  title: string,
  list: [string, () => Promise<unknown>][],
  perTask: number,
): Promise<void> {
  const loops = list.map(([, call]) => compileLoop(call, cpuTime));
  for (const loop of loops) await loop(Math.max(1, perTask >> 2));
  const us: number[][] = list.map(() => []);
  const ratio: number[][] = list.map(() => []);
  for (let round = 0; round < rounds; round++) {
    let before = (await loops[0]!(perTask)) / perTask;
    us[0]!.push(before);
    for (let k = 0; k < loops.length - 1; k++) {
      const index = 1 + ((k + round) % (loops.length - 1));
      const taken = (await loops[index]!(perTask)) / perTask;
      const after = (await loops[0]!(perTask)) / perTask;
      us[index]!.push(taken);
      ratio[index]!.push(taken / ((before + after) / 2));
      before = after;
    }
  }
  console.log(`\n${title} — client CPU per request, ${rounds} interleaved rounds of ${perTask}`);
  list.forEach(([name], i) => {
    const cpu = spread(us[i]!).median / 1000;
    console.log(
      `  ${name.padEnd(56)} ${cpu.toFixed(1).padStart(7)} µs  ${i === 0 ? '1.00×' : formatSpread(spread(ratio[i]!))}`,
    );
  });
}

if (process.env.BENCH_ONLY !== 'big')
  await report('POST, small JSON answer', tasks('/small', post, json), requests);
await report(
  'GET, 1 MiB body in 16 KiB writes',
  tasks('/big', undefined, bytes),
  Math.max(1, Math.floor(requests / 15)),
);
child.stdin!.end();
