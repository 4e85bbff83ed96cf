import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { FakeClock } from '../lib/core/index.js';
import { type ResilientFetch, getResilientFetchToken } from '../lib/http/index.js';
import { RESILIENCE_MODULE_OPTIONS, type ResilienceModuleOptions } from '../lib/nest/index.js';
import { captureLogs } from './support/log-capture.js';

/** What the dependency does with a request, by path prefix; anything else gets healthy JSON. */
type Misbehaviour = 'missing' | 'reset' | 'unavailable-once';

let dependency: Server;
let port = 0;
let misbehave = new Map<string, Misbehaviour>();
/** Each request the dependency read: method, path, Idempotency-Key, and the fake clock's time. */
const requested: { method: string; url: string; key: string | undefined; at: number }[] = [];
/** The clock of the app under test in 'on a clock the test moves'; 0 for the real-clock app. */
let clock: FakeClock | undefined;

beforeAll(async () => {
  dependency = createServer((req, res) => {
    const url = req.url ?? '';
    requested.push({
      method: req.method!,
      url,
      key: req.headers['idempotency-key'] as string | undefined,
      at: clock?.now() ?? 0,
    });
    const prefix = [...misbehave.keys()].find((path) => url.startsWith(path));
    const what = prefix === undefined ? undefined : misbehave.get(prefix);
    if (what === 'missing') {
      res.statusCode = 404;
      res.end();
      return;
    }
    if (what === 'reset') {
      res.socket?.destroy();
      return;
    }
    if (what === 'unavailable-once') {
      misbehave.delete(prefix!);
      res.writeHead(503, { 'retry-after': '1' }).end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(
      url.startsWith('/stock/')
        ? JSON.stringify({ count: 7 })
        : JSON.stringify({ id: `ch_${url.split('/').pop()}` }),
    );
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  port = (dependency.address() as AddressInfo).port;
  process.env.PAYMENTS_URL = `http://127.0.0.1:${port}`;
  process.env.INVENTORY_URL = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await new Promise((resolve) => dependency.close(resolve));
});

describe('the README quick start as it is', () => {
  let app: INestApplication | undefined;
  afterAll(async () => app?.close());

  it('compiles, boots and serves a checkout through both policies', async () => {
    const { AppModule } = await import('./fixtures/quick-start.js');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const response = await request(app.getHttpServer()).get('/checkout/42').expect(200);
    expect(response.body).toEqual({ id: 'ch_42', inStock: 7 });
  });

  it("a 404 from a dependency answers 404 to the client after one attempt, and the host's breaker stays closed", async () => {
    const server = app!.getHttpServer();
    const inventory = app!.get<ResilientFetch>(getResilientFetchToken('inventory'));
    misbehave = new Map([['/stock/', 'missing']]);
    requested.length = 0;
    // 25 calls: past the breaker's 5-failure run and its 20-call minimum throughput, had 404s counted.
    for (let call = 0; call < 25; call++) {
      const response = await request(server).get('/checkout/42').expect(404);
      expect(response.body).toEqual({ statusCode: 404, message: 'inventory answered 404' });
    }
    expect(requested.map(({ url }) => url)).toEqual(
      Array.from({ length: 25 }, () => '/stock/sku-1'),
    );
    expect(inventory.hosts.entries().map(({ key, breaker }) => [key, breaker?.state])).toEqual([
      [`http://127.0.0.1:${port}`, 'closed'],
    ]);

    misbehave = new Map([['/charges/', 'missing']]);
    requested.length = 0;
    const response = await request(server).get('/checkout/43').expect(404);
    expect(response.body).toEqual({ statusCode: 404, message: 'payments answered 404' });
    expect(requested.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /stock/sku-1',
      'POST /charges/43',
    ]);
    misbehave = new Map();
  });
});

describe('the README quick start on a clock the test moves', () => {
  let app: INestApplication | undefined;
  const { records, logger } = captureLogs();

  beforeAll(async () => {
    clock = new FakeClock();
    const { AppModule } = await import('./fixtures/quick-start.js');
    // The quick start's own options, read from the module as it is, with the test's clock.
    const options = (await Test.createTestingModule({ imports: [AppModule] }).compile()).get<
      ResilienceModuleOptions & object
    >(RESILIENCE_MODULE_OPTIONS, { strict: false });
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(RESILIENCE_MODULE_OPTIONS)
      .useValue({ ...options, clock })
      .compile();
    app = moduleRef.createNestApplication({ logger });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    clock = undefined;
  });

  /**
   * Settles a request on the fake clock: real I/O runs between turns, and a timer due within 1 s (a
   * backoff, a Retry-After; never the 2 s attempt bound or the deadline) is passed when it is next.
   */
  async function settle<T>(pending: PromiseLike<T>): Promise<T> {
    let settled = false;
    const result = Promise.resolve(pending).finally(() => (settled = true));
    for (let turn = 0; !settled && turn < 20_000; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      const due = clock!.nextDue;
      if (due !== undefined && due - clock!.now() <= 1000) await clock!.advance(due - clock!.now());
    }
    return result;
  }

  it("a 503 with Retry-After: 1 is retried after exactly 1000 ms, with the charge's Idempotency-Key on both attempts", async () => {
    misbehave = new Map([['/charges/', 'unavailable-once']]);
    requested.length = 0;
    const response = await settle(request(app!.getHttpServer()).get('/checkout/44'));
    expect([response.status, response.body]).toEqual([200, { id: 'ch_44', inStock: 7 }]);
    const charges = requested.filter(({ url }) => url.startsWith('/charges/'));
    expect(charges.map(({ method, key, at }) => [method, key, at - charges[0]!.at])).toEqual([
      ['POST', '"charge-44"', 0],
      ['POST', '"charge-44"', 1000],
    ]);
  });

  it('a dependency that resets every attempt answers 502 problem+json, with one warning naming the host and no stack', async () => {
    misbehave = new Map([['/stock/', 'reset']]);
    requested.length = 0;
    records.length = 0;
    const response = await settle(request(app!.getHttpServer()).get('/checkout/45'));
    misbehave = new Map();
    expect([
      response.status,
      response.headers['content-type'],
      response.body.type,
      response.body.reason,
    ]).toEqual([
      502,
      'application/problem+json; charset=utf-8',
      'urn:nresilience:problem:attempts-exhausted',
      'AttemptsExhausted',
    ]);
    expect(requested.map(({ url }) => url)).toEqual([
      '/stock/sku-1',
      '/stock/sku-1',
      '/stock/sku-1',
    ]);
    expect(records.filter(([level]) => level !== 'log')).toEqual([
      [
        'warn',
        expect.stringMatching(
          new RegExp(
            `^\\[inventory\\] dependency 127\\.0\\.0\\.1:${port} failed on every attempt allowed: \\w+; answered 502$`,
          ),
        ),
        'NResilience.inventory',
      ],
    ]);
  });
});
