import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';

let dependency: Server;
let app: INestApplication | undefined;

beforeAll(async () => {
  dependency = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(req.url?.startsWith('/stock/') ? JSON.stringify({ count: 7 }) : JSON.stringify({ id: `ch_${req.url?.split('/').pop()}` }));
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
