import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  type INestApplication,
  NotFoundException,
  Param,
  ServiceUnavailableException,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { classifyExamples } from '../docs/examples/classification.js';
import {
  AttemptSignal,
  Classifier,
  FakeClock,
  PolicyRegistry,
  ResilienceModule,
  Resilient,
  Verdict,
} from '../lib/nest/index.js';

/**
 * Classification in a real Nest app (issue 8 §3): a loopback dependency answers 404 for unknown
 * items and, for stock, 503 with `Retry-After: 1` once before answering. The `catalog` policy has the
 * default classifier and a breaker; its method throws `NotFoundException` on a 404. The `inventory`
 * policy has `classifier: 'http'` and returns the fetch `Response`. A FakeClock drives every policy.
 */
const DEPENDENCY_URL = Symbol('DEPENDENCY_URL');
const clock = new FakeClock();
const hits: { path: string; at: number }[] = [];
let stockUnavailable = true;

@Injectable()
class Catalog {
  constructor(@Inject(DEPENDENCY_URL) private readonly baseUrl: string) {}

  @Resilient('catalog')
  async item(id: string, @AttemptSignal() signal?: AbortSignal): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}/items/${id}`, { signal });
    if (response.status === 404) throw new NotFoundException(`no item ${id}`);
    if (!response.ok) throw new ServiceUnavailableException();
    return response.json();
  }

  @Resilient('inventory')
  async stock(@AttemptSignal() signal?: AbortSignal): Promise<Response> {
    return fetch(`${this.baseUrl}/stock`, { signal });
  }
}

@Controller()
class ShopController {
  constructor(private readonly catalog: Catalog) {}

  @Get('items/:id')
  item(@Param('id') id: string): Promise<unknown> {
    return this.catalog.item(id);
  }

  @Get('stock')
  async stock(): Promise<unknown> {
    const response = await this.catalog.stock();
    return { status: response.status, body: await response.json() };
  }
}

let dependency: Server;
let app: INestApplication;

beforeAll(async () => {
  dependency = createServer((req, res) => {
    hits.push({ path: req.url ?? '', at: clock.now() });
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/stock') {
      if (stockUnavailable) {
        stockUnavailable = false;
        res.writeHead(503, { 'Retry-After': '1' });
        res.end('{"error":"busy"}');
      } else res.end('{"count":7}');
      return;
    }
    res.statusCode = req.url === '/items/known' ? 200 : 404;
    res.end(req.url === '/items/known' ? '{"id":"known"}' : '{"error":"not found"}');
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  const { port } = dependency.address() as AddressInfo;
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        policies: {
          catalog: { attempts: 3, breaker: true },
          inventory: { attempts: 3, classifier: 'http' },
        },
        clock,
        random: () => 0.5,
        exceptionFilter: true,
      }),
    ],
    controllers: [ShopController],
    providers: [Catalog, { provide: DEPENDENCY_URL, useValue: `http://127.0.0.1:${port}` }],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
});

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => dependency?.close(resolve));
});

describe('classification in Nest', () => {
  it('a 404 thrown as NotFoundException is an answer: never retried, never opening the breaker', async () => {
    hits.length = 0;
    for (let i = 0; i < 8; i++) {
      const response = await request(app.getHttpServer()).get(`/items/missing-${i}`);
      expect([response.status, response.body.message]).toEqual([404, `no item missing-${i}`]);
    }
    expect(hits.map((h) => h.path)).toEqual(
      Array.from({ length: 8 }, (_, i) => `/items/missing-${i}`),
    ); // one request each
    const breaker = app.get(PolicyRegistry).breaker('catalog')!;
    expect([breaker.state, breaker.snapshot().consecutiveFailures]).toEqual(['closed', 0]);
    expect((await request(app.getHttpServer()).get('/items/known')).body).toEqual({ id: 'known' });
  });

  it('a 503 with Retry-After: 1 is honoured: the retry waits exactly 1 s of policy time, then succeeds', async () => {
    hits.length = 0;
    const pending = request(app.getHttpServer())
      .get('/stock')
      .then((response) => response);
    // Wait (on real sockets, not on the policy's clock) until the pushback's timer is set.
    for (let i = 0; i < 2000 && clock.pending === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 1));
    expect(hits.length).toBe(1);
    await clock.advance(999);
    expect(hits.length).toBe(1);
    await clock.advance(1);
    const response = await pending;
    expect([response.status, response.body]).toEqual([200, { status: 200, body: { count: 7 } }]);
    expect(hits.map((h) => h.at - hits[0]!.at)).toEqual([0, 1000]);
  });
});

describe('classifiers given in code (ResilienceModule.forRoot({ classifiers }))', () => {
  it('replaces the configured classifier of that name', async () => {
    const payments = Classifier.forErrors(Classifier.when(RangeError, Verdict.transient));
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          policies: { payments: { classifier: 'http' }, other: {} },
          classifiers: { payments },
        }),
      ],
    }).compile();
    const started = await moduleRef.createNestApplication({ logger: false }).init();
    const registry = started.get(PolicyRegistry);
    expect(registry.get('payments').options.classifier).toBe(payments);
    expect(
      registry
        .get('other')
        .options.classifier.classifyError(new NotFoundException(), { callerAborted: false }),
    ).toBe(Verdict.permanent);
    await started.close();
  });

  it('refuses to start when a code classifier names no configured policy, or is not a Classifier', async () => {
    const start = async (classifiers: Record<string, unknown>) => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot({
            policies: { payments: {} },
            classifiers: classifiers as never,
          }),
        ],
      }).compile();
      return moduleRef.createNestApplication({ logger: false }).init();
    };
    await expect(start({ paymnets: Classifier.http })).rejects.toThrow(
      'classifiers.paymnets: "[Classifier]" is invalid: must name a configured policy (payments)',
    );
    await expect(start({ payments: () => Verdict.ok })).rejects.toThrow('classifiers.payments');
  });
});

describe('docs/classification.md example', () => {
  it('gives each listed error its verdict, and the code classifier its rule', () => {
    expect(classifyExamples()).toEqual({
      validation: 'Permanent',
      conflict: 'Permanent',
      reset: 'Transient',
      stale: 'Permanent',
      badGateway: 'Transient',
    });
  });
});
