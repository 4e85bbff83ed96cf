import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { PolicyRegistry } from '../lib/nest/index.js';
import { Test } from '@nestjs/testing';
import request from 'supertest';

let dependency: Server;
let app: INestApplication | undefined;
/** Path prefixes the dependency answers 404 (no such resource) instead of JSON. */
let missing: string[] = [];
const requested: string[] = [];

beforeAll(async () => {
  dependency = createServer((req, res) => {
    requested.push(req.url ?? '');
    if (missing.some((prefix) => req.url?.startsWith(prefix))) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(
      req.url?.startsWith('/stock/')
        ? JSON.stringify({ count: 7 })
        : JSON.stringify({ id: `ch_${req.url?.split('/').pop()}` }),
    );
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  const { port } = dependency.address() as AddressInfo;
  process.env.PAYMENTS_URL = `http://127.0.0.1:${port}`;
  process.env.INVENTORY_URL = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => dependency.close(resolve));
});

it('the README quick start compiles, boots and serves a checkout through both policies', async () => {
  const { AppModule } = await import('./fixtures/quick-start.js');
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const response = await request(app.getHttpServer()).get('/checkout/42').expect(200);
  expect(response.body).toEqual({ id: 'ch_42', inStock: 7 });
});

it("a 404 from a dependency answers 404 to the client after one attempt, and the http preset's breaker stays closed", async () => {
  const server = app!.getHttpServer();
  const registry = app!.get(PolicyRegistry);
  missing = ['/stock/'];
  requested.length = 0;
  // 25 calls: past the breaker's 20-call minimum throughput and its 5-failure run, had 404s counted.
  for (let call = 0; call < 25; call++) {
    const response = await request(server).get('/checkout/42').expect(404);
    expect(response.body).toEqual({ statusCode: 404, message: 'inventory answered 404' });
  }
  expect(requested).toEqual(Array.from({ length: 25 }, () => '/stock/sku-1'));
  expect(registry.breaker('inventory')!.state).toBe('closed');

  missing = ['/charges/'];
  requested.length = 0;
  const response = await request(server).get('/checkout/43').expect(404);
  expect(response.body).toEqual({ statusCode: 404, message: 'payments answered 404' });
  expect(requested).toEqual(['/stock/sku-1', '/charges/43']);
  missing = [];
});
