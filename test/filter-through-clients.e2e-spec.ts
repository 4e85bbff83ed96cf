import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { Controller, Get, HttpException, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios, { type AxiosInstance } from 'axios';
import request from 'supertest';
import {
  AttemptStalledError,
  Backoff,
  CallRejectedError,
  DeadlineExceededError,
  FakeClock,
  Resilience,
  RetryBudget,
} from '../lib/core/index.js';
import { createResilienceInterceptor } from '../lib/grpc/index.js';
import {
  type ResilientFetch,
  createResilientFetch,
  installResilientAdapter,
} from '../lib/http/index.js';
import { ResilienceModule } from '../lib/nest/index.js';
import { LoopbackGrpc, unary } from './support/grpc-loopback.js';
import { captureLogs } from './support/log-capture.js';

/**
 * The exception filter answers the library's refusals and deadlines however they reach a route (a
 * grpc-js ServiceError from the gRPC interceptor, an application's wrapper, the axios seam), and the
 * dependency failures of the library's own clients as 502 with one warning per window, never a stack.
 * Real sockets: a closed port, a loopback HTTP server breaking its body, a loopback gRPC server.
 */
const clock = new FakeClock();
const { records, logger: capture } = captureLogs();

const policy = (name: string) =>
  Resilience.default.with({
    name,
    clock,
    attempts: 3,
    backoff: Backoff.none,
    budget: RetryBudget.none,
  });
let closedPort = 0;
let bodyServer: Server;
let bodyUrl = '';
let grpcServer: LoopbackGrpc;
let grpcClient: grpc.Client & Record<string, (...args: unknown[]) => unknown>;
let down: ResilientFetch;
let gapped: ResilientFetch;
let api: AxiosInstance;

@Controller()
class RoutesController {
  @Get('grpc-refused')
  grpcRefused(): never {
    // What grpc-js hands the caller of a call the interceptor refused: its ServiceError, ours as cause.
    throw Object.assign(new Error('14 UNAVAILABLE: call rejected'), {
      code: 14,
      details: 'call rejected',
      metadata: new grpc.Metadata(),
      cause: new CallRejectedError('DependencyUnavailable', 1500),
    });
  }

  @Get('grpc-late')
  grpcLate(): never {
    throw Object.assign(new Error('4 DEADLINE_EXCEEDED'), {
      code: 4,
      details: 'deadline',
      metadata: new grpc.Metadata(),
      cause: new DeadlineExceededError(800),
    });
  }

  @Get('wrapped')
  wrapped(): never {
    throw new Error('could not price the order', {
      cause: new CallRejectedError('BudgetExhausted', 200),
    });
  }

  @Get('answered')
  answered(): never {
    throw new HttpException('the app answers', 418, {
      cause: new CallRejectedError('BudgetExhausted', 200),
    });
  }

  @Get('stalled')
  stalled(): never {
    throw new AttemptStalledError(5000, 1024);
  }

  @Get('down')
  async down(): Promise<string> {
    return (await down(`http://127.0.0.1:${closedPort}/prices`)).text();
  }

  @Get('broken')
  async broken(): Promise<string> {
    return (await down(`${bodyUrl}/broken`)).text();
  }

  @Get('broken-gap')
  async brokenGap(): Promise<string> {
    return (await gapped(`${bodyUrl}/broken`)).text();
  }

  @Get('axios-502')
  async axios502(): Promise<unknown> {
    return (await api.get(`${bodyUrl}/bad-gateway`)).data;
  }

  @Get('grpc-down')
  async grpcDown(): Promise<unknown> {
    const outcome = await unary(grpcClient, 'Say');
    if (outcome.error !== undefined) throw outcome.error;
    return outcome.reply;
  }

  @Get('bug')
  bug(): never {
    throw new Error('a bug of the application');
  }
}

let app: INestApplication;
beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  bodyServer = createServer((req, res) => {
    if (req.url === '/bad-gateway') {
      res.writeHead(502, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    // Headers and part of the body, then the connection breaks.
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
    res.write('0123456789', () => setImmediate(() => res.socket?.destroy()));
  });
  await new Promise<void>((resolve) => bodyServer.listen(0, '127.0.0.1', resolve));
  bodyUrl = `http://127.0.0.1:${(bodyServer.address() as AddressInfo).port}`;
  down = createResilientFetch({ policy: policy('prices') });
  gapped = createResilientFetch({ policy: policy('prices'), bodyGapTimeout: 60_000 });
  api = axios.create();
  await installResilientAdapter(api, { policy: policy('quotes') });
  grpcServer = await LoopbackGrpc.start();
  grpcClient = grpcServer.client('Echo', {
    interceptors: [
      createResilienceInterceptor({
        policy: policy('stock'),
        repeatable: ['nresilience.test.Echo'],
      }),
    ],
  });

  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        policies: {},
        clock,
        exceptionFilter: true,
        logging: 'off',
        telemetry: false,
      }),
    ],
    controllers: [RoutesController],
  }).compile();
  app = moduleRef.createNestApplication({ logger: capture });
  await app.init();
});

afterAll(async () => {
  await app?.close();
  grpcClient?.close();
  grpcServer?.close();
  await new Promise<void>((resolve) => bodyServer.close(() => resolve()));
});

beforeEach(() => {
  records.length = 0;
});

const warnings = () => records.filter(([level]) => level === 'warn');
const errors = () => records.filter(([level]) => level === 'error');

describe('refusals and deadlines wrapped by a client', () => {
  it('answers a ServiceError of the gRPC interceptor whose cause is a refusal 503 with Retry-After, a deadline 504', async () => {
    const refused = await request(app.getHttpServer()).get('/grpc-refused');
    expect([
      refused.status,
      refused.headers['retry-after'],
      refused.headers['content-type'],
      refused.body.reason,
    ]).toEqual([503, '2', 'application/problem+json; charset=utf-8', 'DependencyUnavailable']);
    const late = await request(app.getHttpServer()).get('/grpc-late');
    expect([late.status, late.headers['retry-after'], late.body.reason]).toEqual([
      504,
      undefined,
      'DeadlineExceeded',
    ]);
    expect(errors()).toEqual([]);
  });

  it('finds a refusal through an application error’s cause chain, but never inside an HttpException (the app’s answer)', async () => {
    const wrapped = await request(app.getHttpServer()).get('/wrapped');
    expect([wrapped.status, wrapped.headers['retry-after'], wrapped.body.reason]).toEqual([
      503,
      '1',
      'BudgetExhausted',
    ]);
    const answered = await request(app.getHttpServer()).get('/answered');
    expect([answered.status, answered.body]).toEqual([
      418,
      { statusCode: 418, message: 'the app answers' },
    ]);
  });

  it('answers a stalled answer 504 like a deadline', async () => {
    const stalled = await request(app.getHttpServer()).get('/stalled');
    expect([stalled.status, stalled.body.type, stalled.body.reason]).toEqual([
      504,
      'urn:nresilience:problem:deadline-exceeded',
      'AttemptStalled',
    ]);
  });
});

describe('a dependency of the library’s own clients that fails', () => {
  it('answers ECONNREFUSED behind the resilient fetch 502 problem+json, with one warning per window naming the host and the cause, no stack', async () => {
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await request(app.getHttpServer()).get('/down'));
    expect(
      answers.map((response) => [
        response.status,
        response.headers['content-type'],
        response.body.type,
        response.body.reason,
      ]),
    ).toEqual(
      Array.from({ length: 5 }, () => [
        502,
        'application/problem+json; charset=utf-8',
        'urn:nresilience:problem:attempts-exhausted',
        'AttemptsExhausted',
      ]),
    );
    expect(answers[0]!.text).not.toMatch(/127\.0\.0\.1|fetch failed|at /);
    expect(errors()).toEqual([]);
    expect(warnings()).toEqual([
      [
        'warn',
        `[prices] dependency 127.0.0.1:${closedPort} failed on every attempt allowed: ECONNREFUSED; answered 502`,
        'NResilience.prices',
      ],
    ]);
    // The window is 30 s on the module's clock: the next warning carries the count of the quiet ones.
    await clock.advance(30_000);
    expect((await request(app.getHttpServer()).get('/down')).status).toBe(502);
    expect(warnings().map(([, message]) => message)).toEqual([
      `[prices] dependency 127.0.0.1:${closedPort} failed on every attempt allowed: ECONNREFUSED; answered 502`,
      `[prices] dependency 127.0.0.1:${closedPort} failed on every attempt allowed: ECONNREFUSED; answered 502 (4 more answers like it since the previous warning)`,
    ]);
  });

  it.each(['/broken', '/broken-gap'])(
    'answers a body that breaks while the handler reads it (%s) 502 BodyBroken, without a stack',
    async (path) => {
      await clock.advance(30_000);
      const broken = await request(app.getHttpServer()).get(path);
      expect([broken.status, broken.body.type, broken.body.reason]).toEqual([
        502,
        'urn:nresilience:problem:dependency-failed',
        'BodyBroken',
      ]);
      expect(errors()).toEqual([]);
      expect(warnings().map(([, message]) => message)).toEqual([
        expect.stringMatching(
          /^\[prices\] dependency 127\.0\.0\.1:\d+ failed part-way through its answer: UND_ERR_SOCKET; answered 502$/,
        ),
      ]);
    },
  );

  it('answers the axios seam’s last 5xx 502 naming the status', async () => {
    await clock.advance(30_000);
    const failed = await request(app.getHttpServer()).get('/axios-502');
    expect([failed.status, failed.body.reason]).toEqual([502, 'AttemptsExhausted']);
    expect(warnings().map(([, message]) => message)).toEqual([
      expect.stringMatching(
        /^\[quotes\] dependency 127\.0\.0\.1:\d+ failed on every attempt allowed: HTTP 502; answered 502$/,
      ),
    ]);
  });

  it('answers the gRPC interceptor’s last UNAVAILABLE 502 naming the service', async () => {
    await clock.advance(30_000);
    grpcServer.script(
      'Say',
      { code: grpc.status.UNAVAILABLE },
      { code: grpc.status.UNAVAILABLE },
      { code: grpc.status.UNAVAILABLE },
    );
    const failed = await request(app.getHttpServer()).get('/grpc-down');
    expect([failed.status, failed.body.reason, grpcServer.calls('Say').length]).toEqual([
      502,
      'AttemptsExhausted',
      3,
    ]);
    expect(warnings().map(([, message]) => message)).toEqual([
      '[stock] dependency nresilience.test.Echo failed on every attempt allowed: UNAVAILABLE; answered 502',
    ]);
  });

  it('leaves the application’s own errors to Nest: 500 and its error log', async () => {
    const bug = await request(app.getHttpServer()).get('/bug');
    expect([bug.status, bug.body]).toEqual([
      500,
      { statusCode: 500, message: 'Internal server error' },
    ]);
    expect(errors().map(([, message]) => message)).toEqual([
      expect.stringContaining('a bug of the application'),
    ]);
    expect(warnings()).toEqual([]);
  });
});
