import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent, type IncomingMessage, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { HealthController } from '../docs/examples/shutdown-grace.js';
import { ResilienceHealthIndicator, ResilienceHealthModule } from '../lib/health/index.js';
import { FakeClock, PolicyRegistry, ResilienceModule } from '../lib/nest/index.js';

/**
 * The shutdown grace over real loopback on both adapters, with keep-alive clients: on SIGTERM
 * readiness answers down at once, idle keep-alive connections are closed, every answer carries
 * `Connection: close`, the server keeps accepting for the grace (5 s on a FakeClock, so the test
 * says when it has passed), then stops accepting; a request in flight throughout is answered, and
 * `app.close()` resolves as soon as it is.
 */
let releaseSlow: () => void = () => undefined;
let slowStarted = false;

@Controller()
class AppController {
  @Get('fast')
  fast(): { ok: true } {
    return { ok: true };
  }

  @Get('slow')
  async slow(): Promise<{ slow: true }> {
    slowStarted = true;
    await new Promise<void>((resolve) => (releaseSlow = resolve));
    return { slow: true };
  }
}

/** The app's module, its policies and its grace on `clock`. */
function appModule(clock: FakeClock) {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        policies: { api: {} },
        clock,
        shutdown: { grace: '5s' },
        telemetry: false,
        logging: 'off',
      }),
      ResilienceHealthModule.forRoot({ logger: false }),
    ],
    controllers: [AppController, HealthController],
  })
  class AppModule {}
  return AppModule;
}

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  readonly body: string;
  readonly socket: Socket;
}

/** One GET through `agent`; rejects with the socket error (ECONNREFUSED, ECONNRESET). */
function get(url: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent }, (response: IncomingMessage) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          connection: response.headers.connection,
          body,
          socket: request.socket!,
        }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

/** Polls `predicate` on the real clock (the wire is real), failing after 3 s. */
async function until(predicate: () => boolean, what: string): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > 3000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const agents: Agent[] = [];
function keepAliveAgent(): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  return agent;
}
let started: { app: INestApplication; clock: FakeClock } | undefined;
afterEach(async () => {
  // A test that failed half-way leaves its app closing: let its request and grace end.
  releaseSlow();
  if (started !== undefined) {
    await started.clock.advance(5000);
    await started.app.close();
    started = undefined;
  }
  for (const agent of agents.splice(0)) agent.destroy();
});

async function start(
  adapter: FastifyAdapter | undefined,
): Promise<{ app: INestApplication; base: string; clock: FakeClock }> {
  slowStarted = false;
  const clock = new FakeClock();
  const moduleRef = await Test.createTestingModule({ imports: [appModule(clock)] }).compile();
  const app: INestApplication =
    adapter === undefined
      ? moduleRef.createNestApplication({ logger: false })
      : moduleRef.createNestApplication(adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  started = { app, clock };
  return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1'), clock };
}

describe.each([
  ['Express', () => undefined],
  ['Fastify', () => new FastifyAdapter()],
])('shutdown: { grace: "5s" } (%s)', (name, adapter) => {
  it('on SIGTERM: readiness down, Connection: close, still accepting for the grace; then stops accepting, answers the request in flight, and closes at once', async () => {
    const { app, base, clock } = await start(adapter());
    const client = keepAliveAgent();
    const indicator = app.get(ResilienceHealthIndicator);

    // Before: keep-alive answers, and the client keeps its connection idle in the pool.
    const before = await get(`${base}/fast`, client);
    expect([before.status, before.connection]).toEqual([200, 'keep-alive']);
    expect((await get(`${base}/health/ready`, client)).status).toBe(200);
    let idleClosed = false;
    before.socket.once('close', () => (idleClosed = true));

    const slow = get(`${base}/slow`, keepAliveAgent());
    slow.catch(() => undefined); // asserted below; a failure earlier must not leave it unhandled
    await until(() => slowStarted, 'the slow request to reach its handler');

    let closed = false;
    // What Nest's SIGTERM handler (enableShutdownHooks) does: close with the signal.
    const closing = (app as unknown as { close(signal: string): Promise<void> })
      .close('SIGTERM')
      .then(() => (closed = true));
    // The idle keep-alive connection is closed by the server right away.
    await until(() => idleClosed, 'the idle keep-alive connection to be closed');

    // During the grace: readiness answers down, every answer says Connection: close, and a client
    // sending again and again gets a fresh connection each time (none is kept open on it).
    const ready = await get(`${base}/health/ready`, client);
    expect([ready.status, ready.connection]).toEqual([503, 'close']);
    // The indicator says down itself, whichever module's shutdown hook Nest ran first (terminus
    // marks its own checks 'shutting_down' only once its hook has run); a liveness check without
    // the option stays up.
    expect(
      indicator.isHealthy('resilience', { downWhenShuttingDown: true }).resilience.status,
    ).toBe('down');
    expect(indicator.isHealthy('resilience').resilience.status).toBe('up');
    expect(app.get(PolicyRegistry).shuttingDown).toBe(true);
    const during: Answer[] = [];
    for (let i = 0; i < 5; i++) during.push(await get(`${base}/fast`, client));
    expect(during.map((a) => [a.status, a.connection])).toEqual(
      Array.from({ length: 5 }, () => [200, 'close']),
    );
    expect(new Set(during.map((a) => a.socket)).size).toBe(5);
    expect(closed).toBe(false);
    expect(app.get(PolicyRegistry).draining).toBe(false);

    // The grace passes: the registry drains and Nest closes the server, which stops accepting.
    await clock.advance(5000);
    await until(
      () => app.get(PolicyRegistry).draining,
      'the registry to drain once the grace has passed',
    );
    await until(() => !app.getHttpServer().listening, 'the server to stop accepting');
    await expect(get(`${base}/fast`, client)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(closed).toBe(false);

    // The request in flight all along is answered (never reset), and then close resolves at once.
    const answeredAt = performance.now();
    releaseSlow();
    const answer = await slow;
    expect([answer.status, answer.connection, answer.body]).toEqual([
      200,
      'close',
      '{"slow":true}',
    ]);
    await closing;
    const closeMs = performance.now() - answeredAt;
    process.stdout.write(
      `shutdown grace (${name}): app.close() resolved ${closeMs.toFixed(0)} ms after the last answer\n`,
    );
    expect(closeMs).toBeLessThan(500);
  });

  it('app.close() without SIGTERM does not wait for the grace, and answers before it kept keep-alive', async () => {
    const { app, base, clock } = await start(adapter());
    const client = keepAliveAgent();
    expect((await get(`${base}/fast`, client)).connection).toBe('keep-alive');
    const started = performance.now();
    await app.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(app.get(PolicyRegistry).draining).toBe(true);
    expect(clock.pending).toBe(0);
  });
});

describe('shutdown option', () => {
  it('a bad grace stops the app at start-up, naming the field, the value and the rule', () => {
    expect(() =>
      PolicyRegistry.create({ policies: { api: {} }, shutdown: { grace: 'soon' } }),
    ).toThrow(
      'shutdown.grace: "soon" is invalid: must be a finite duration in ms >= 0, written as a ms number or a string such as "250ms", "10s", "2m"',
    );
    expect(() =>
      PolicyRegistry.create({
        policies: { api: {} },
        shutdown: { grace: 1000, drain: true } as never,
      }),
    ).toThrow('shutdown.drain: true is invalid: is not a known shutdown option (grace)');
  });
});
