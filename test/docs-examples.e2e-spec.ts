import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';
import { tripAndRecover } from '../docs/examples/circuit-breaker.js';
import { reloadPayments } from '../docs/examples/config-reload.js';
import { interceptor } from '../docs/examples/grpc-client.js';
import { InventoryClientModule } from '../docs/examples/grpc-nest-client.js';
import { InventoryServerModule } from '../docs/examples/grpc-server.js';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { ResilienceRpcContextInterceptor } from '../lib/nest/index.js';
import { fetchPrices } from '../docs/examples/http-fetch.js';
import { plainPolicy } from '../docs/examples/plain-policy.js';
import { drainBudget } from '../docs/examples/retry-budget.js';
import { bulkhead } from '../docs/examples/limits.js';
import { localLimit } from '../docs/examples/rate-limits.js';
import { hedgedRead } from '../docs/examples/hedging.js';
import { countCalls } from '../docs/examples/telemetry.js';
import { LoopbackGrpc } from './support/grpc-loopback.js';

// The examples the docs/ guides show (their marked regions), run against real loopback servers.
let server: Server;
let url: string;
let requests = 0;
/** What the server saw: `METHOD path idempotency-key`. */
const seen: string[] = [];
let quotes = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    seen.push(`${req.method} ${req.url} ${req.headers['idempotency-key'] ?? '-'}`);
    if (req.url?.startsWith('/quote/')) {
      res.statusCode = quotes++ === 0 ? 503 : 200;
      res.end(res.statusCode === 200 ? '12.5' : 'busy');
      return;
    }
    if (req.url === '/orders') {
      res.statusCode = 201;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'receipt-1' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/charges`;
  grpcServer = await LoopbackGrpc.start();
});

let grpcServer: LoopbackGrpc;

afterAll(async () => {
  grpcServer.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('docs/getting-started.md: without Nest', () => {
  it('run resolves with the receipt; tryRun resolves with the result record', async () => {
    const { receipt, result } = await plainPolicy(url, async () => 'done');
    expect(receipt).toEqual({ id: 'receipt-1' });
    expect(requests).toBe(1);
    expect([result.ok, result.value, result.reason, result.attempts.length]).toEqual([
      true,
      'done',
      'succeeded',
      1,
    ]);
  });

  it('tryRun never rejects: a failing work ends as a record carrying its error', async () => {
    const { result } = await plainPolicy(url, async () => {
      throw new TypeError('bad input');
    });
    // TypeError is Permanent under the default classifier: one attempt, no retry.
    expect([
      result.ok,
      result.reason,
      result.attempts.length,
      (result.error as Error).message,
    ]).toEqual([false, 'permanent', 1, 'bad input']);
  });
});

describe('docs/retry-budget.md', () => {
  it('ten failing calls spend the ten tokens on their retries; the eleventh retry is refused', async () => {
    const { outcomes, utilization } = await drainBudget();
    expect(outcomes).toEqual([
      ...Array<string>(10).fill('inventory down'),
      'refused: BudgetExhausted',
    ]);
    expect(utilization).toBe(1);
  });
});

describe('docs/limits.md', () => {
  it('a limit of 2 with a queue of 1: two run, one waits for a slot, the fourth is answered by the fallback', async () => {
    const { answers, limiter } = await bulkhead();
    expect(answers).toEqual(['fresh price', 'fresh price', 'fresh price', 'cached price']);
    expect(limiter).toMatchObject({
      kind: 'concurrency',
      limit: 2,
      inflight: 0,
      queued: 0,
      queue: 1,
    });
  });
});

describe('docs/rate-limits.md', () => {
  it('5/s with a burst of 2: three calls at once, two run, the third is refused with the ms to the next token', async () => {
    expect(await localLimit()).toEqual(['place 1', 'place 2', 'limited 100 ms']);
  });
});

describe('docs/hedging.md', () => {
  it('answers a call whose first attempt hangs from its hedge, started at the live p95 (~20 ms)', async () => {
    const { answer, attempts, threshold } = await hedgedRead();
    expect(answer).toBe('price');
    expect(attempts).toBe(2);
    expect(Math.abs(threshold! / 20 - 1)).toBeLessThan(0.05);
  });
});

describe('docs/circuit-breaker.md', () => {
  it('opens on the fifth failure, refuses with the break left, closes after two good probes', async () => {
    expect(await tripAndRecover()).toEqual({
      states: ['open', 'closed'],
      refused: 'DependencyUnavailable, retry after 9900 ms',
    });
  });
});

describe('docs/configuration.md', () => {
  it('a reload takes effect on the same handle and keeps the breaker; a bad one is refused and changes nothing', () => {
    const { attempts, sameBreaker, refusal } = reloadPayments();
    expect([attempts, sameBreaker]).toEqual([2, true]);
    expect(refusal).toContain('policies.payments.attempts: 0 is invalid: must be an integer >= 1');
  });
});

describe('docs/telemetry.md', () => {
  it('counts logical calls and attempts', async () => {
    expect(await countCalls()).toEqual({ calls: 3, attempts: 4 });
  });
});

describe('docs/http.md', () => {
  it('retries the 503 GET once and sends the POST with its idempotency key', async () => {
    seen.length = 0;
    const result = await fetchPrices(url.replace('/charges', ''));
    expect(result).toEqual({ quote: [200, '12.5'], order: 201, hosts: 1 });
    expect(seen).toEqual(['GET /quote/sku-1 -', 'GET /quote/sku-1 -', 'POST /orders "order-42"']);
  });
});

describe('docs/grpc.md', () => {
  it('UNAVAILABLE is retried through the interceptor; the first attempt says it may be retried', async () => {
    grpcServer.script('Say', { code: 14, details: 'restarting' }, {});
    const client = grpcServer.client('Echo', {
      interceptors: [interceptor],
    }) as unknown as Client & {
      Say(
        request: object,
        callback: (error: ServiceError | null, reply: { text: string }) => void,
      ): void;
    };
    try {
      const reply = await new Promise<{ text: string }>((resolve, reject) =>
        client.Say({ text: 'hi' }, (error, value) => (error ? reject(error) : resolve(value))),
      );
      const calls = grpcServer.calls('Say');
      expect([reply.text, calls.length]).toEqual(['reply 2', 2]);
      expect((calls[0]!.metadata as Metadata).get('x-nresilience-retrying')).toEqual(['1']);
    } finally {
      client.close();
    }
  });
});

describe('docs/grpc.md: in Nest', () => {
  it('the client module boots and provides the INVENTORY client', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [InventoryClientModule],
    }).compile();
    try {
      const client = moduleRef.get<{ getService(name: string): object }>('INVENTORY');
      expect(typeof client.getService('Inventory')).toBe('object');
    } finally {
      await moduleRef.close();
    }
  });
});

describe('docs/grpc.md: server side', () => {
  it('the server module boots with the stock policy and provides the context interceptor as APP_INTERCEPTOR', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [InventoryServerModule],
    }).compile();
    try {
      await moduleRef.init();
      const { PolicyRegistry } = await import('../lib/nest/index.js');
      expect(moduleRef.get(PolicyRegistry).describe('stock').preset).toBe('http');
      const providers = Reflect.getMetadata('providers', InventoryServerModule) as {
        provide: unknown;
        useClass: unknown;
      }[];
      expect(providers).toEqual([
        { provide: APP_INTERCEPTOR, useClass: ResilienceRpcContextInterceptor },
      ]);
    } finally {
      await moduleRef.close();
    }
  });
});
