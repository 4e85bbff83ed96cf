import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { LoopbackServer, answer, reset } from './support/loopback-server.js';

// docs/http.md's Nest example, booted against a payments server that resets the first POST and a
// rates server that answers 502 first.
let payments: LoopbackServer;
let rates: LoopbackServer;
let app: INestApplication;

beforeAll(async () => {
  payments = await LoopbackServer.start((n, req, res) =>
    n === 0 ? reset(req) : answer(res, 201, { id: 'ch_1' }),
  );
  rates = await LoopbackServer.start((n, _req, res) =>
    answer(res, n === 0 ? 502 : 200, { eur: 1.08 }),
  );
  process.env.PAYMENTS_URL = payments.url;
  process.env.RATES_URL = rates.url;
  const { AppModule } = await import('./fixtures/readme-http.js');
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
});

afterAll(async () => {
  await app?.close();
  await payments?.close();
  await rates?.close();
});

describe('docs/http.md: the Nest example', () => {
  it('retries the keyed POST with the same key and returns the answer', async () => {
    const response = await request(app.getHttpServer()).post('/orders').expect(201);
    expect(response.body).toEqual({ status: 201 });
    expect(payments.seen.map((r) => r.headers['idempotency-key'])).toEqual([
      '"order-42"',
      '"order-42"',
    ]);
  });

  it('runs HttpService under the rates policy, bounded by the caller time left', async () => {
    const response = await request(app.getHttpServer())
      .get('/rates')
      .set('x-nresilience-remaining-ms', '600')
      .expect(200);
    expect(response.body).toEqual({ eur: 1.08 });
    expect(rates.seen).toHaveLength(2);
    expect(Number(rates.seen[0]!.headers['x-nresilience-remaining-ms'])).toBeLessThanOrEqual(600);
  });

  it('answers 504 before the handler when the caller has less than the reserve left', async () => {
    const before = rates.seen.length;
    await request(app.getHttpServer())
      .get('/rates')
      .set('x-nresilience-remaining-ms', '10')
      .expect(504);
    expect(rates.seen).toHaveLength(before);
  });
});
