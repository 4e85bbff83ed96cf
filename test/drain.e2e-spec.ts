import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IncomingMessage, createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { InjectPolicy, PolicyHandle, PolicyRegistry, ResilienceModule } from '../lib/nest/index.js';

/**
 * Drain on shutdown, over real loopback on both adapters: a request whose call failed once and now
 * waits in a 30 s backoff is in flight when `app.close()` starts. It must be answered at once with the
 * failure it had (one attempt), and `app.close()` must not wait for the backoff.
 */
let dependency: Server;
let dependencyUrl = '';
let hits = 0;

beforeAll(async () => {
  dependency = createServer((_req, res) => {
    hits++;
    res.statusCode = 503;
    res.end('down');
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  dependencyUrl = `http://127.0.0.1:${(dependency.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => dependency.close(resolve));
});

@Controller()
class DrainController {
  constructor(@InjectPolicy('upstream') private readonly upstream: PolicyHandle) {}

  @Get('work')
  async work(): Promise<{ reason: string; attempts: number; error: string }> {
    const result = await this.upstream.tryRun(async () => {
      const response = await fetch(dependencyUrl);
      await response.text();
      throw new Error(`upstream answered ${response.status}`);
    });
    return {
      reason: result.reason,
      attempts: result.attempts.length,
      error: (result.error as Error).message,
    };
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { upstream: { attempts: 3, backoff: { type: 'constant', delay: '30s' } } },
      telemetry: false,
      logging: 'off',
    }),
  ],
  controllers: [DrainController],
})
class AppModule {}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent: false }, (response: IncomingMessage) => {
      let body = '';
      response
        .on('data', (chunk: Buffer) => (body += chunk))
        .on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each([
  ['Express', () => undefined],
  ['Fastify', () => new FastifyAdapter()],
])('drain on shutdown (%s)', (_name, adapter) => {
  it('answers the request waiting in backoff at once with its failure; app.close() is not held by the backoff', async () => {
    hits = 0;
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const httpAdapter = adapter();
    const app: INestApplication =
      httpAdapter === undefined
        ? moduleRef.createNestApplication({ logger: false })
        : moduleRef.createNestApplication(httpAdapter, { logger: false });
    await app.listen(0, '127.0.0.1');
    const registry = app.get(PolicyRegistry);
    const url = `${await app.getUrl()}/work`.replace('[::1]', '127.0.0.1');

    const pending = get(url);
    await until(
      () => hits === 1 && registry.get('upstream').bucket()!.level < 30,
      'the first attempt to fail and the backoff to start',
    );
    const closing = performance.now();
    await app.close();
    const closeMs = performance.now() - closing;
    const response = await pending;
    process.stdout.write(
      `drain (${_name}): app.close() took ${closeMs.toFixed(0)} ms with a call waiting in a 30 s backoff\n`,
    );

    expect(registry.draining).toBe(true);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      reason: 'draining',
      attempts: 1,
      error: 'upstream answered 503',
    });
    expect(hits).toBe(1);
    // The backoff was 30 s: closing took a small fraction of it.
    expect(closeMs).toBeLessThan(5_000);
  });
});
