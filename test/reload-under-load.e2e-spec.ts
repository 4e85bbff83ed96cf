import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Controller,
  Get,
  Injectable,
  type INestApplication,
  type LoggerService,
  Module,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import autocannonModule from 'autocannon';
import {
  type BreakerSnapshot,
  PolicyRegistry,
  type ReloadEvent,
  ResilienceModule,
  Resilient,
} from '../lib/nest/index.js';

/**
 * 20 reloads of a watched resilience.yaml (8 of them invalid) while a real loopback load of 650 calls/s
 * (offered) runs for 10 s through a Nest app to a real loopback dependency. The rate achieved is
 * printed, not asserted: it is a speed, and depends on what else the machine runs.
 */
interface LoadResult {
  requests: { total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
const autocannon = autocannonModule as unknown as (
  options: Record<string, unknown>,
) => Promise<LoadResult>;

const LOAD_SECONDS = 10;
const RATE = 650;
const RELOADS = 20;

// The dependency: /ok/<n> fails the first attempt of every 10th call (its retry succeeds), /dead always fails.
const firstSeen = new Set<string>();
// Attempts counted where the policy makes them: a request that fails on the wire (a reset keep-alive
// socket on a loaded machine) is an attempt the breaker records but the dependency's handler never sees.
let okAttempts = 0;
let okHits = 0;
let deadHits = 0;
let dependency: Server;
let baseUrl = '';
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function call(path: string): Promise<number> {
  if (path.startsWith('/ok/')) okAttempts++;
  return new Promise((resolve, reject) => {
    const request = httpGet(`${baseUrl}${path}`, { agent }, (response) => {
      response
        .resume()
        .on('end', () =>
          response.statusCode === 200
            ? resolve(200)
            : reject(new Error(`dependency answered ${response.statusCode}`)),
        );
    });
    request.on('error', reject);
  });
}

@Injectable()
class Dependencies {
  @Resilient('steady', { returns: 'promise' })
  ok(n: number): Promise<number> {
    return call(`/ok/${n}`);
  }

  @Resilient('dead', { returns: 'promise' })
  dead(): Promise<number> {
    return call('/dead');
  }
}

let inFlight = 0;

@Controller()
class LoadController {
  private n = 0;
  constructor(private readonly dependencies: Dependencies) {}

  @Get('steady')
  async steady(): Promise<string> {
    inFlight++;
    try {
      await this.dependencies.ok(++this.n);
    } finally {
      inFlight--;
    }
    return 'ok';
  }

  @Get('dead')
  async dead(): Promise<string> {
    await this.dependencies.dead();
    return 'ok';
  }
}

/** Keeps the error lines Nest writes (an unexpected error, e.g. from a disposed object, would show here). */
class ErrorLines implements LoggerService {
  readonly lines: string[] = [];
  error(message: unknown): void {
    this.lines.push(String(message));
  }
  log(): void {}
  warn(): void {}
}

/** Waits, bounded, on real time: the wire and the watcher are real. */
async function until(predicate: () => boolean, what: string, bound = 5000): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > bound) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'nresilience-reload-load-'));
const path = join(dir, 'resilience.yaml');

/** Reload `i`: valid ones alternate steady's attempts (2, 3) and dead's trip count; 2 and 4 of every 5 are invalid. */
function config(i: number): string {
  const mark = `# reload ${i}\n`;
  if (i % 5 === 2) return `${mark}policies:\n  steady: { attempts: 0 }\n  dead: {}\n`;
  if (i % 5 === 4) return `${mark}policies:\n  steady: [unclosed\n`;
  return `${mark}policies:
  steady:
    attempts: ${2 + (i % 2)}
    backoff: { type: constant, delay: 1ms }
    budget: { fraction: 0.2 }
    breaker: { consecutiveFailures: 0, errorRateMultiple: 0, slowCallMultiple: 0 }
  dead:
    attempts: 1
    breaker: { consecutiveFailures: ${3 + (i % 2)}, breakDuration: 60s, jitter: none }
`;
}

let app: INestApplication | undefined;

beforeAll(async () => {
  dependency = createServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/ok/')) {
      okHits++;
      const n = Number(url.slice(4));
      res.statusCode = n % 10 === 0 && !firstSeen.has(url) ? 503 : 200;
      firstSeen.add(url);
    } else {
      deadHits++;
      res.statusCode = 500;
    }
    res.end();
  });
  // Longer than the run, so the client's kept-alive sockets are never closed under it.
  dependency.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(dependency.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  agent.destroy();
  await new Promise((resolve) => dependency.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

it(`${RELOADS} reloads (8 invalid) under ${RATE} calls/s for ${LOAD_SECONDS} s: no call lost, breaker state and counts kept`, async () => {
  writeFileSync(path, config(0));
  @Module({
    imports: [
      ResilienceModule.forRoot({
        configFile: path,
        watch: true,
        exceptionFilter: true,
        telemetry: false,
        logging: 'off',
      }),
    ],
    controllers: [LoadController],
    providers: [Dependencies],
  })
  class AppModule {}
  const errors = new ErrorLines();
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  app = moduleRef.createNestApplication({ logger: errors });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  const registry = app.get(PolicyRegistry);
  const steady = registry.breaker('steady')!;
  const dead = registry.breaker('dead')!;

  // At every reload: the kept breakers, read at that moment.
  const seen: {
    event: ReloadEvent;
    steady: BreakerSnapshot;
    dead: BreakerSnapshot;
    okHits: number;
    deadHits: number;
  }[] = [];
  registry.onReload((event) => {
    expect(registry.breaker('steady')).toBe(steady);
    expect(registry.breaker('dead')).toBe(dead);
    seen.push({ event, steady: steady.snapshot(), dead: dead.snapshot(), okHits, deadHits });
  });

  const started = performance.now();
  const load = autocannon({
    url: `${url}/steady`,
    connections: 50,
    overallRate: RATE,
    duration: LOAD_SECONDS,
  });
  const deadLoad = autocannon({
    url: `${url}/dead`,
    connections: 1,
    overallRate: 10,
    duration: LOAD_SECONDS,
  });
  // 3 failures at 10 calls/s open it in 0.3 s; a starved CPU (load 12 on 2 cores) took more than 5 s.
  await until(() => dead.state === 'open', 'the dead breaker to open', LOAD_SECONDS * 1000);
  // One write per slot, each waited for, so no two writes fall in one quiet period on a busy machine.
  const slot = (LOAD_SECONDS * 1000 - 1500) / RELOADS;
  for (let i = 1; i <= RELOADS; i++) {
    const slotEnd = new Promise((resolve) => setTimeout(resolve, slot));
    if (i % 3 === 0) {
      writeFileSync(`${path}.tmp`, config(i));
      renameSync(`${path}.tmp`, path);
    } else writeFileSync(path, config(i));
    await until(() => seen.length === i, `reload ${i}`);
    await slotEnd;
  }
  const [result, deadResult] = await Promise.all([load, deadLoad]);
  const seconds = (performance.now() - started) / 1000;
  await until(() => inFlight === 0, 'the last calls');
  // Measured, not asserted (a rate is a speed, and this machine is shared): printed for the record.
  process.stdout.write(
    `reload-under-load: ${result.requests.total} calls in ${seconds.toFixed(1)} s = ${(result.requests.total / seconds).toFixed(0)} calls/s offered ${RATE}/s, ${seen.length} reloads\n`,
  );

  // Load: ≥ 500 calls/s, every call answered 200 (the 10 % first-attempt failures were retried).
  expect([result.errors, result.timeouts, result.non2xx]).toEqual([0, 0, 0]);
  expect(result.statusCodeStats['200']?.count).toBe(result.requests.total);
  // Reloads: each write reloaded once, invalid ones refused.
  expect(seen.map((s) => s.event.kind)).toEqual(
    Array.from({ length: RELOADS }, (_, k) =>
      [2, 4].includes((k + 1) % 5) ? 'reloadFailed' : 'reloaded',
    ),
  );
  expect(registry.reloadCounts).toEqual({ reloaded: 12, reloadFailed: 8 });
  expect(registry.get('steady').options.attempts).toBe(2 + (RELOADS % 2));
  // The steady breaker lost no outcome across the reloads: its window never shrank at a reload, grew
  // between the reloads made under load, and holds every attempt the policy made.
  for (let k = 1; k < seen.length; k++)
    expect(seen[k]!.steady.tripWindowCalls).toBeGreaterThanOrEqual(
      seen[k - 1]!.steady.tripWindowCalls,
    );
  expect(seen[RELOADS / 2]!.steady.tripWindowCalls).toBeGreaterThan(
    seen[0]!.steady.tripWindowCalls,
  );
  expect(steady.snapshot().tripWindowCalls).toBe(okAttempts);
  expect(okHits).toBeLessThanOrEqual(okAttempts);
  expect(steady.state).toBe('closed');
  // The dead breaker opened on its 3rd failure and stayed open through every reload, its break running down.
  expect(deadHits).toBe(3);
  expect(seen.every((s) => s.dead.state === 'open')).toBe(true);
  for (let k = 1; k < seen.length; k++)
    expect(seen[k]!.dead.breakRemaining).toBeLessThan(seen[k - 1]!.dead.breakRemaining);
  expect(dead.settings.consecutiveFailures).toBe(3 + (RELOADS % 2));
  expect(deadResult.statusCodeStats['500']?.count).toBe(3);
  expect(deadResult.statusCodeStats['503']?.count).toBe(deadResult.requests.total - 3);
  // No error but the three dead calls that reached the dependency before its breaker opened.
  expect(errors.lines).toEqual([
    'Error: dependency answered 500',
    'Error: dependency answered 500',
    'Error: dependency answered 500',
  ]);
}, 30_000);
