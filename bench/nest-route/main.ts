/**
 * The Nest route bench (issue 15, DESIGN §10), on demand: `npm run bench:nest` (after a build,
 * `node dist-sample/bench/nest-route/main.js [--rounds 7] [--seconds 3] [--connections 50]`).
 *
 * Starts `app.ts` in its own process, then loads `GET /plain` and `GET /resilient` with autocannon
 * over loopback in interleaved rounds (the order alternates each round, after one warm-up round of
 * each). Reports the median over the rounds, with min–max, of requests per second and p99 latency of
 * each route, and of the per-round ratio resilient ÷ plain (target: throughput ≥ 0.95×, p99 within 10 %).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { formatSpread, smoke, spread } from '../harness.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: smoke ? '1' : '7' },
    seconds: { type: 'string', default: smoke ? '1' : '3' },
    connections: { type: 'string', default: '50' },
  },
});
const rounds = Number(values.rounds);
const duration = Number(values.seconds);
const connections = Number(values.connections);

const app = spawn(process.execPath, [fileURLToPath(new URL('./app.js', import.meta.url))], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    app.once('exit', (code) => reject(new Error(`bench app exited (${code}) before listening`)));
    app.stdout!.on('data', (chunk: Buffer) => {
      const line = (seen += chunk.toString()).split('\n').find((l) => l.startsWith('{'));
      if (line !== undefined) resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const load = async (path: string, seconds: number) => {
    const result = await autocannon({
      url: `http://127.0.0.1:${port}${path}`,
      connections,
      duration: seconds,
    });
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return { rps: result.requests.average, p99: result.latency.p99 };
  };
  if (!smoke) for (const path of ['/plain', '/resilient']) await load(path, 1);

  const plain: { rps: number; p99: number }[] = [];
  const resilient: { rps: number; p99: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const path of round % 2 === 0 ? ['/plain', '/resilient'] : ['/resilient', '/plain']) {
      (path === '/plain' ? plain : resilient).push(await load(path, duration));
    }
  }
  const rpsRatio = spread(resilient.map((r, i) => r.rps / plain[i]!.rps));
  const p99Ratio = spread(resilient.map((r, i) => r.p99 / plain[i]!.p99));
  console.log(
    `\nNest route (express), ${rounds} interleaved rounds × ${duration} s per route, ${connections} connections, Node ${process.version}; median (min–max)`,
  );
  const row = (name: string, xs: { rps: number; p99: number }[]) => {
    const rps = spread(xs.map((x) => x.rps));
    const p99 = spread(xs.map((x) => x.p99));
    return {
      route: name,
      'req/s': `${rps.median.toFixed(0)} (${rps.min.toFixed(0)}–${rps.max.toFixed(0)})`,
      'p99 ms': `${p99.median} (${p99.min}–${p99.max})`,
    };
  };
  console.table([
    row('GET /plain (undecorated)', plain),
    row("GET /resilient (@Resilient('route'))", resilient),
  ]);
  console.log(
    `resilient ÷ plain: throughput ${formatSpread(rpsRatio, 3)}, p99 ${formatSpread(p99Ratio, 3)} (targets: ≥ 0.95×, ≤ 1.10×)`,
  );
} finally {
  app.kill('SIGTERM');
}
