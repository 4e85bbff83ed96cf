import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  BadGatewayException,
  Controller,
  Get,
  Inject,
  Injectable,
  type INestApplication,
  Param,
} from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request, { type Response } from 'supertest';
import { ResilienceHealthIndicator, ResilienceHealthModule } from '../lib/health/index.js';
import {
  AttemptSignal,
  CallRejectedError,
  FakeClock,
  PolicyRegistry,
  ResilienceModule,
  Resilient,
} from '../lib/nest/index.js';

/**
 * Health and refusals end to end (issue 3 §3, §4): a real Nest app on platform-express, a real
 * loopback dependency, the payments breaker driven open by real failed requests. A FakeClock drives
 * the policies (breaks, the guarded pause), so every duration below is exact: backoff none and no
 * budget mean nothing else waits on a timer.
 */

const DEPENDENCY_URL = Symbol('DEPENDENCY_URL');
let healthy = false;
let dependencyRequests = 0;

@Injectable()
class PaymentsClient {
  constructor(@Inject(DEPENDENCY_URL) private readonly baseUrl: string) {}

  @Resilient('payments')
  async charge(orderId: string, @AttemptSignal() signal?: AbortSignal): Promise<{ id: string }> {
    const response = await fetch(`${this.baseUrl}/charges/${orderId}`, { method: 'POST', signal });
    if (!response.ok) throw new Error(`payments answered ${response.status}`);
    return (await response.json()) as { id: string };
  }
}

@Controller()
class AppController {
  constructor(
    private readonly payments: PaymentsClient,
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  @Get('checkout/:orderId')
  async checkout(@Param('orderId') orderId: string): Promise<{ id: string }> {
    try {
      return await this.payments.charge(orderId);
    } catch (error) {
      if (error instanceof CallRejectedError) throw error;
      throw new BadGatewayException('payments failed');
    }
  }

  @Get('health/live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.resilience.isHealthy()]);
  }

  @Get('health/ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.resilience.isHealthy('resilience', { downWhenOpen: ['payments'] }),
    ]);
  }
}

const clock = new FakeClock();
let dependency: Server;
let app: INestApplication;

beforeAll(async () => {
  dependency = createServer((_request, response) => {
    dependencyRequests++;
    response.setHeader('content-type', 'application/json');
    response.statusCode = healthy ? 200 : 500;
    response.end(healthy ? JSON.stringify({ id: `ch_${dependencyRequests}` }) : '{"error":"down"}');
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  const { port } = dependency.address() as AddressInfo;
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        policies: {
          payments: {
            attempts: 1,
            backoff: { type: 'none' },
            budget: false,
            breaker: { breakDuration: '15s', jitter: 'none' },
          },
          inventory: { preset: 'http' },
        },
        clock,
        exceptionFilter: true,
      }),
      ResilienceHealthModule.forRoot({ logger: false }),
    ],
    controllers: [AppController],
    providers: [PaymentsClient, { provide: DEPENDENCY_URL, useValue: `http://127.0.0.1:${port}` }],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
});

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => dependency?.close(resolve));
});

const INVENTORY_OK = { status: 'ok', breaker: 'closed', breakRemaining: 0, budgetUtilization: 0 };

function payments(breaker: string, breakRemaining: number): Record<string, unknown> {
  const status = breaker === 'closed' ? 'ok' : 'degraded';
  return { status, breaker, breakRemaining, budgetUtilization: null };
}

function resilienceDetails(response: Response): unknown {
  return response.body.details.resilience;
}

/** A request the breaker refuses: waits for the guarded pause's timer, moves the FakeClock exactly 100 ms, returns the answer. */
async function refused(path: string): Promise<Response> {
  const pending = request(app.getHttpServer())
    .get(path)
    .then((response) => response);
  for (let i = 0; i < 2000 && clock.pending === 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 1));
  expect(clock.pending).toBe(1);
  await clock.advance(100);
  return pending;
}

describe('health with a real failing dependency and the payments breaker', () => {
  it('starts closed and ok', async () => {
    const live = await request(app.getHttpServer()).get('/health/live').expect(200);
    expect(live.body.status).toBe('ok');
    expect(resilienceDetails(live)).toEqual({
      status: 'up',
      payments: payments('closed', 0),
      inventory: INVENTORY_OK,
    });
    await request(app.getHttpServer()).get('/health/ready').expect(200);
  });

  it('opens after 5 consecutive Transient failures (each a real 500 from the dependency)', async () => {
    for (let order = 1; order <= 4; order++)
      await request(app.getHttpServer()).get(`/checkout/${order}`).expect(502);
    expect(app.get(PolicyRegistry).breaker('payments')!.state).toBe('closed');
    await request(app.getHttpServer()).get('/checkout/5').expect(502);
    expect(dependencyRequests).toBe(5);
    expect(app.get(PolicyRegistry).breaker('payments')!.state).toBe('open');
    expect(clock.now()).toBe(0);
  });

  it('liveness: 200, status up, payments degraded with the whole 15 s break left, inventory closed/ok', async () => {
    const live = await request(app.getHttpServer()).get('/health/live').expect(200);
    expect(live.body).toEqual({
      status: 'ok',
      info: {
        resilience: { status: 'up', payments: payments('open', 15_000), inventory: INVENTORY_OK },
      },
      error: {},
      details: {
        resilience: { status: 'up', payments: payments('open', 15_000), inventory: INVENTORY_OK },
      },
    });
  });

  it('readiness with downWhenOpen: 503 carrying the payments detail', async () => {
    const ready = await request(app.getHttpServer()).get('/health/ready').expect(503);
    expect(ready.body).toEqual({
      status: 'error',
      info: {},
      error: {
        resilience: { status: 'down', payments: payments('open', 15_000), inventory: INVENTORY_OK },
      },
      details: {
        resilience: { status: 'down', payments: payments('open', 15_000), inventory: INVENTORY_OK },
      },
    });
  });

  it('a refused call: 503 after the 100 ms guarded pause, Retry-After 15 (14 900 ms rounded up), dependency not called', async () => {
    const response = await refused('/checkout/6');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('15');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.reason).toBe('DependencyUnavailable');
    expect(clock.now()).toBe(100);
    expect(dependencyRequests).toBe(5);
    const live = await request(app.getHttpServer()).get('/health/live').expect(200);
    expect(resilienceDetails(live)).toEqual({
      status: 'up',
      payments: payments('open', 14_900),
      inventory: INVENTORY_OK,
    });
  });

  it('10 s later: Retry-After 5 (4 800 ms left after the pause), health shows 4 900 ms before it', async () => {
    await clock.advance(10_000);
    const before = await request(app.getHttpServer()).get('/health/live').expect(200);
    expect(resilienceDetails(before)).toEqual({
      status: 'up',
      payments: payments('open', 4_900),
      inventory: INVENTORY_OK,
    });
    const response = await refused('/checkout/7');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(clock.now()).toBe(10_200);
    expect(dependencyRequests).toBe(5);
  });

  it('at the end of the break: halfOpen, still degraded, readiness back to 200 so traffic can probe', async () => {
    await clock.advance(4_800);
    expect(clock.now()).toBe(15_000);
    const live = await request(app.getHttpServer()).get('/health/live').expect(200);
    expect(resilienceDetails(live)).toEqual({
      status: 'up',
      payments: payments('halfOpen', 0),
      inventory: INVENTORY_OK,
    });
    const ready = await request(app.getHttpServer()).get('/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
  });

  it('two good probes close it; health shows closed/ok', async () => {
    healthy = true;
    const first = await request(app.getHttpServer()).get('/checkout/8').expect(200);
    expect(first.body).toEqual({ id: 'ch_6' });
    expect(app.get(PolicyRegistry).breaker('payments')!.state).toBe('halfOpen');
    await request(app.getHttpServer()).get('/checkout/9').expect(200);
    expect(dependencyRequests).toBe(7);
    const live = await request(app.getHttpServer()).get('/health/live').expect(200);
    expect(live.body.status).toBe('ok');
    expect(resilienceDetails(live)).toEqual({
      status: 'up',
      payments: payments('closed', 0),
      inventory: INVENTORY_OK,
    });
    await request(app.getHttpServer()).get('/health/ready').expect(200);
  });

  it('an isolated breaker is down for readiness (break left at least breakDuration) and up for liveness; released, it probes again', async () => {
    const release = app.get(PolicyRegistry).breaker('payments')!.isolate();
    const ready = await request(app.getHttpServer()).get('/health/ready').expect(503);
    expect(resilienceDetails(ready)).toEqual({
      status: 'down',
      payments: payments('isolated', 15_000),
      inventory: INVENTORY_OK,
    });
    await request(app.getHttpServer()).get('/health/live').expect(200);
    release();
    const after = await request(app.getHttpServer()).get('/health/ready').expect(200);
    expect(resilienceDetails(after)).toEqual({
      status: 'up',
      payments: payments('halfOpen', 0),
      inventory: INVENTORY_OK,
    });
    app.get(PolicyRegistry).breaker('payments')!.reset();
  });
});

describe('entry points', () => {
  it('the root entry and lib/nest, lib/core never import @nestjs/terminus (it is an optional peer)', () => {
    const root = process.cwd();
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory()
          ? sources(path)
          : path.endsWith('.ts') && !path.endsWith('.spec.ts')
            ? [path]
            : [];
      });
    const offenders = [
      ...sources(join(root, 'lib/nest')),
      ...sources(join(root, 'lib/core')),
    ].filter((file) =>
      /['"]@nestjs\/terminus['"]|['"]\.\.\/health\//.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('the built root entry loads with @nestjs/terminus unresolvable; ./health then fails to load', async () => {
    const hook =
      'export async function resolve(s, c, next) { if (s.startsWith("@nestjs/terminus")) throw new Error("terminus hidden"); return next(s, c); }';
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    const script =
      "const r = await import('@nresilience/nestjs'); let health = 'loaded'; try { await import('@nresilience/nestjs/health'); } catch (e) { health = e.message; } console.log(typeof r.ResilienceModule, health);";
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(register)}`,
        '--input-type=module',
        '-e',
        script,
      ],
      { timeout: 15_000 },
    );
    expect(stdout.trim()).toBe('function terminus hidden');
  });

  const sample = fileURLToPath(new URL('../dist-sample/sample/02-health/main.js', import.meta.url));
  it('the built health sample boots, prints both URLs, and answers live 200 / ready 503 with payments open', async () => {
    if (!existsSync(sample)) throw new Error(`${sample} is missing: run \`npm run build\` first`);
    const { stdout } = await promisify(execFile)(process.execPath, [sample], {
      timeout: 15_000,
      killSignal: 'SIGKILL',
    });
    expect(stdout).toMatch(/^liveness: {2}http:\/\/127\.0\.0\.1:\d+\/health\/live$/m);
    expect(stdout).toMatch(/^readiness: http:\/\/127\.0\.0\.1:\d+\/health\/ready$/m);
    expect(stdout).toMatch(/^GET \/checkout\/6 -> 503 \(Retry-After: 15\) /m);
    expect(stdout).toMatch(
      /^GET \/health\/live -> 200 .*"payments":\{"status":"degraded","breaker":"open"/m,
    );
    expect(stdout).toMatch(/^GET \/health\/ready -> 503 .*"status":"down"/m);
  });
});
