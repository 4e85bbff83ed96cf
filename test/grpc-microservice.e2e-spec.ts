import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  Inject,
  type INestApplication,
  type INestMicroservice,
  Module,
  type OnModuleInit,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import {
  ClientsModule,
  type ClientGrpc,
  GrpcMethod,
  RpcException,
  Transport,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { firstValueFrom, type Observable } from 'rxjs';
import request from 'supertest';
import { createResilienceInterceptor, type ResilienceInterceptor } from '../lib/grpc/index.js';
import {
  Ambient,
  CallRejectedError,
  DeadlineExceededError,
  InjectPolicy,
  type PolicyHandle,
  PolicyRegistry,
  ResilienceModule,
  ResilienceRpcContextInterceptor,
} from '../lib/nest/index.js';
import { ECHO_PROTO, LoopbackGrpc } from './support/grpc-loopback.js';

/** The downstream Ledger the app under test calls (a scripted loopback server). */
let ledger: LoopbackGrpc;
/** The interceptor of the app's Ledger client (the last app built). */
let ledgerInterceptor: ResilienceInterceptor;
/** The ambient time left a handler saw, per call. */
const seenRemaining: (number | undefined)[] = [];

interface LedgerService {
  Post(request: { text: string }): Observable<{ text: string; call: number }>;
}

@Controller()
class GatewayController implements OnModuleInit {
  private ledgerService!: LedgerService;

  constructor(
    @Inject('LEDGER') private readonly client: ClientGrpc,
    @InjectPolicy('guarded') private readonly guarded: PolicyHandle,
  ) {}

  onModuleInit(): void {
    this.ledgerService = this.client.getService<LedgerService>('Ledger');
  }

  @GrpcMethod('Gateway', 'Act')
  async act({ text }: { text: string }): Promise<{ text: string; call: number }> {
    seenRemaining.push(Ambient.remaining());
    switch (text) {
      case 'relay':
        return firstValueFrom(this.ledgerService.Post({ text }));
      case 'budget':
        throw new CallRejectedError('BudgetExhausted', 1234.2, { policy: 'ledger' });
      case 'unknown-hint':
        throw new CallRejectedError('BudgetExhausted', undefined);
      case 'breaker':
        return this.guarded.run(() => ({ text: 'never', call: 0 }));
      case 'deadline':
        throw new DeadlineExceededError(250);
      case 'rpc':
        throw new RpcException({ code: grpc.status.NOT_FOUND, message: 'no such order' });
      default:
        return { text, call: 0 };
    }
  }
}

@Controller('http')
class HttpRoutesController {
  @Get('refused')
  refused(): never {
    throw new CallRejectedError('DependencyUnavailable', 2500);
  }

  @Get('late')
  late(): never {
    throw new DeadlineExceededError(300);
  }
}

function appModule() {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        policies: {
          ledger: { attempts: 3, backoff: { transientBase: 1 } },
          guarded: { attempts: 1, breaker: true },
        },
        exceptionFilter: true,
      }),
      ClientsModule.registerAsync([
        {
          name: 'LEDGER',
          inject: [PolicyRegistry],
          useFactory: (registry: PolicyRegistry) => ({
            transport: Transport.GRPC,
            options: {
              package: 'nresilience.test',
              protoPath: ECHO_PROTO,
              url: ledger.address,
              channelOptions: {
                interceptors: [
                  (ledgerInterceptor = createResilienceInterceptor({
                    policy: () => registry.keyedTemplate('ledger'),
                    repeatable: ['nresilience.test.Ledger'],
                  })),
                ],
              },
            },
          }),
        },
      ]),
    ],
    controllers: [GatewayController, HttpRoutesController],
    providers: [{ provide: APP_INTERCEPTOR, useClass: ResilienceRpcContextInterceptor }],
  })
  class AppModule {}
  return AppModule;
}

const grpcOptions = (url: string) =>
  ({
    transport: Transport.GRPC,
    options: { package: 'nresilience.test', protoPath: ECHO_PROTO, url },
  }) as const;

/** A plain grpc-js client of the app's Gateway service (no interceptor: what any caller sees). */
function gatewayClient(address: string) {
  const Gateway = (grpc.loadPackageDefinition(protoDefinition()).nresilience as grpc.GrpcObject)
    .test as grpc.GrpcObject;
  return new (Gateway.Gateway as grpc.ServiceClientConstructor)(
    address,
    grpc.credentials.createInsecure(),
  );
}

function protoDefinition() {
  return protoLoader.loadSync(ECHO_PROTO, { keepCase: true, defaults: true });
}

interface ActOutcome {
  reply?: { text: string; call: number };
  error?: grpc.ServiceError;
}

function act(
  client: grpc.Client,
  text: string,
  options: grpc.CallOptions = {},
): Promise<ActOutcome> {
  return new Promise((resolve) => {
    (client as unknown as Record<string, (...args: unknown[]) => void>).Act!(
      { text },
      new grpc.Metadata(),
      options,
      (error: grpc.ServiceError | null, reply?: { text: string; call: number }) =>
        resolve(error ? { error } : { reply }),
    );
  });
}

const freePort = async (): Promise<number> => {
  const probe = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    probe.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  await new Promise<void>((resolve) => probe.tryShutdown(() => resolve()));
  return port;
};

beforeAll(async () => {
  ledger = await LoopbackGrpc.start();
});
afterAll(() => ledger.close());
afterEach(() => {
  ledger.reset();
  seenRemaining.length = 0;
});

/** The gRPC answers every variant of the app gives; shared by the microservice and the hybrid app. */
function answersInGrpcTerms(address: () => string, registry: () => PolicyRegistry) {
  let client: grpc.Client;
  beforeAll(() => {
    client = gatewayClient(address());
  });
  afterAll(() => client.close());

  it('a budget refusal answers UNAVAILABLE with grpc-retry-pushback-ms = the hint rounded up to whole ms', async () => {
    const { error } = await act(client, 'budget');
    expect([
      error?.code,
      error?.metadata.get('grpc-retry-pushback-ms'),
      error?.metadata.get('x-nresilience-refusal'),
    ]).toEqual([grpc.status.UNAVAILABLE, ['1235'], ['BudgetExhausted']]);
    expect(error?.details).toContain('BudgetExhausted');
  });

  it('a refusal without a hint answers UNAVAILABLE without pushback', async () => {
    const { error } = await act(client, 'unknown-hint');
    expect([error?.code, error?.metadata.get('grpc-retry-pushback-ms')]).toEqual([
      grpc.status.UNAVAILABLE,
      [],
    ]);
  });

  it("an open breaker's refusal answers UNAVAILABLE with the break left as pushback", async () => {
    const release = registry().breaker('guarded')!.isolate();
    try {
      const { error } = await act(client, 'breaker');
      const left = registry().breaker('guarded')!.retryAfter();
      const pushback = Number(error?.metadata.get('grpc-retry-pushback-ms')[0]);
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(pushback).toBeGreaterThanOrEqual(left);
      expect(pushback).toBeLessThanOrEqual(left + 1000);
    } finally {
      release();
    }
  });

  it('a deadline answers DEADLINE_EXCEEDED', async () => {
    const { error } = await act(client, 'deadline');
    expect([error?.code, error?.details]).toEqual([
      grpc.status.DEADLINE_EXCEEDED,
      'deadline of 250ms exceeded',
    ]);
  });

  it('an RpcException the app threw keeps its code and message (not UNKNOWN or INTERNAL)', async () => {
    const { error } = await act(client, 'rpc');
    expect([error?.code, error?.details]).toEqual([grpc.status.NOT_FOUND, 'no such order']);
  });

  it("the inbound grpc-timeout bounds the handler's outbound gRPC call: min(inbound, own) + 50 ms on the wire", async () => {
    ledger.script('Post', { code: grpc.status.UNAVAILABLE }, {});
    const { reply } = await act(client, 'relay', { deadline: Date.now() + 400 });
    expect(reply).toEqual({ text: 'reply 2', call: 2 });
    expect(seenRemaining[0]).toBeGreaterThan(300);
    expect(seenRemaining[0]).toBeLessThanOrEqual(400);
    const [first, second] = ledger.calls('Post');
    expect(first!.remaining).toBeLessThanOrEqual(450);
    expect(second!.remaining).toBeLessThan(first!.remaining);
    expect(Number(first!.metadata.get('x-nresilience-remaining-ms')[0])).toBeLessThanOrEqual(400);
    expect([
      first!.metadata.get('x-nresilience-retrying'),
      second!.metadata.get('x-nresilience-retrying'),
    ]).toEqual([['1'], []]);
  });

  it('passes a refusal of the service below up at once: one downstream call, the same reason and pushback to its caller', async () => {
    ledger.script('Post', {
      code: grpc.status.UNAVAILABLE,
      pushback: '4000',
      refusal: 'DependencyUnavailable',
    });
    const { error } = await act(client, 'relay');
    expect([
      error?.code,
      error?.metadata.get('grpc-retry-pushback-ms'),
      error?.metadata.get('x-nresilience-refusal'),
    ]).toEqual([grpc.status.UNAVAILABLE, ['4000'], ['DependencyUnavailable']]);
    expect(ledger.calls('Post')).toHaveLength(1);
  });

  it("classifies the registry policy's downstream statuses by the gRPC rule: NOT_FOUND is an answer, not retried", async () => {
    ledger.script('Post', { code: grpc.status.NOT_FOUND });
    const { error } = await act(client, 'relay');
    expect(error).toBeDefined();
    expect(ledger.calls('Post')).toHaveLength(1);
    expect(
      ledgerInterceptor.policyFor('nresilience.test.Ledger').breaker()?.snapshot()
        .consecutiveFailures ?? 0,
    ).toBe(0);
  });

  it("keeps the Ledger service's state its own: not the name's pinned budget and breaker", () => {
    const policy = ledgerInterceptor.policyFor('nresilience.test.Ledger');
    expect(policy.options.attempts).toBe(3);
    expect(policy.bucket()).toBeDefined();
    expect(policy.bucket()).not.toBe(registry().bucket('ledger'));
  });

  it('without an inbound deadline the handler runs with no ambient time limit', async () => {
    await act(client, 'plain');
    expect(seenRemaining).toEqual([undefined]);
  });
}

describe('Nest gRPC microservice', () => {
  let app: INestMicroservice;
  let address = '';
  beforeAll(async () => {
    address = `127.0.0.1:${await freePort()}`;
    const moduleRef = await Test.createTestingModule({ imports: [appModule()] }).compile();
    app = moduleRef.createNestMicroservice(grpcOptions(address));
    await app.listen();
  });
  afterAll(async () => app.close());

  answersInGrpcTerms(
    () => address,
    () => app.get(PolicyRegistry),
  );
});

describe('hybrid app (HTTP + gRPC through connectMicroservice)', () => {
  let app: INestApplication;
  let address = '';
  beforeAll(async () => {
    address = `127.0.0.1:${await freePort()}`;
    const moduleRef = await Test.createTestingModule({ imports: [appModule()] }).compile();
    app = moduleRef.createNestApplication();
    app.connectMicroservice(grpcOptions(address), { inheritAppConfig: true });
    await app.startAllMicroservices();
    await app.init();
  });
  afterAll(async () => app.close());

  it('HTTP routes still answer 503 with Retry-After and 504 with problem+json', async () => {
    const refused = await request(app.getHttpServer()).get('/http/refused');
    expect([refused.status, refused.headers['retry-after'], refused.body.reason]).toEqual([
      503,
      '3',
      'DependencyUnavailable',
    ]);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const late = await request(app.getHttpServer()).get('/http/late');
    expect([late.status, late.body.reason]).toEqual([504, 'DeadlineExceeded']);
  });

  answersInGrpcTerms(
    () => address,
    () => app.get(PolicyRegistry),
  );
});
