import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import {
  ClientProxyFactory,
  GrpcMethod,
  MessagePattern,
  RpcException,
  Transport,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createServer } from 'node:net';
import { firstValueFrom, timeout } from 'rxjs';
import {
  CallRejectedError,
  FakeClock,
  ResilienceModule,
  type ResilienceForRootOptions,
  Resilient,
} from '../lib/nest/index.js';
import { markDependencyFailure } from '../lib/core/internal.js';
import { ECHO_PROTO } from './support/grpc-loopback.js';

// The filters in RPC handlers: the opt-in 502 filter catches every exception, and in a gRPC handler
// the errors it has no answer for must get Nest's own RPC handling, exactly as with the default
// filter (exceptionFilter: true); over a transport other than gRPC (TCP) both answer a refusal as
// Nest does: a filter that rethrows there leaves the call unanswered for ever.

@Controller()
class GatewayController {
  @GrpcMethod('Gateway', 'Act')
  async act({ text }: { text: string }): Promise<{ text: string; call: number }> {
    if (text === 'rpc')
      throw new RpcException({ code: grpc.status.NOT_FOUND, message: 'no such order' });
    if (text === 'bug') throw new Error('secret internals of this service');
    if (text === 'refused') throw new CallRejectedError('BudgetExhausted', 1200);
    if (text === 'dependency') throw dependencyDown();
    return this.flaky();
  }

  @Resilient('ledger')
  async flaky(): Promise<never> {
    throw new Error('ledger reset the connection');
  }
}

/** What the resilient fetch rejects with when its dependency refused every connection. */
function dependencyDown(): Error {
  const error = new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
  markDependencyFailure(error, {
    policy: 'ledger',
    dependency: '127.0.0.1:1',
    cause: 'ECONNREFUSED',
    ending: 'attemptsExhausted',
  });
  return error;
}

const running: INestMicroservice[] = [];
const clients: grpc.Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const app of running.splice(0)) await app.close();
});

async function boot(
  exceptionFilter: ResilienceForRootOptions['exceptionFilter'],
): Promise<grpc.Client> {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        clock: new FakeClock(),
        policies: { ledger: { attempts: 2, backoff: { type: 'none' } } },
        exceptionFilter,
      }),
    ],
    controllers: [GatewayController],
  })
  class AppModule {}
  const address = `127.0.0.1:${await freePort()}`;
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestMicroservice({
    transport: Transport.GRPC,
    options: { package: 'nresilience.test', protoPath: ECHO_PROTO, url: address },
    logger: false,
  });
  running.push(app);
  await app.listen();
  const definition = protoLoader.loadSync(ECHO_PROTO, { keepCase: true, defaults: true });
  const Gateway = (
    (grpc.loadPackageDefinition(definition).nresilience as grpc.GrpcObject).test as grpc.GrpcObject
  ).Gateway as grpc.ServiceClientConstructor;
  const client = new Gateway(address, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

async function freePort(): Promise<number> {
  const probe = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    probe.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  await new Promise<void>((resolve) => probe.tryShutdown(() => resolve()));
  return port;
}

function act(client: grpc.Client, text: string): Promise<[number | undefined, string | undefined]> {
  return new Promise((resolve) => {
    (client as unknown as Record<string, (...args: unknown[]) => void>).Act!(
      { text },
      { deadline: Date.now() + 2000 },
      (error: grpc.ServiceError | null) => resolve([error?.code, error?.details]),
    );
  });
}

describe.each([
  ['exceptionFilter: true', true],
  ['exceptionFilter: { badGateway: true }', { badGateway: true }],
] as const)('a gRPC handler with %s', (_label, exceptionFilter) => {
  it('an RpcException keeps its code and message', async () => {
    const client = await boot(exceptionFilter);
    expect(await act(client, 'rpc')).toEqual([grpc.status.NOT_FOUND, 'no such order']);
  });

  it("an error of the app's own gets Nest's answer, not its message", async () => {
    const client = await boot(exceptionFilter);
    expect(await act(client, 'bug')).toEqual([grpc.status.UNKNOWN, 'Internal server error']);
  });

  it("attempts exhausted on the work's own error get Nest's answer (the 502 is HTTP's)", async () => {
    const client = await boot(exceptionFilter);
    expect(await act(client, 'exhausted')).toEqual([grpc.status.UNKNOWN, 'Internal server error']);
  });

  it("a dependency failure of the library's own client answers UNAVAILABLE naming the dependency (HTTP answers 502), not UNKNOWN", async () => {
    const client = await boot(exceptionFilter);
    expect(await act(client, 'dependency')).toEqual([
      grpc.status.UNAVAILABLE,
      'dependency 127.0.0.1:1 failed: ECONNREFUSED',
    ]);
  });

  it('a refusal still answers UNAVAILABLE', async () => {
    const client = await boot(exceptionFilter);
    expect((await act(client, 'refused'))[0]).toBe(grpc.status.UNAVAILABLE);
  });
});

@Controller()
class TcpController {
  @MessagePattern('refused')
  refused(): never {
    throw new CallRejectedError('BudgetExhausted', 1200);
  }

  @MessagePattern('rpc')
  rpc(): never {
    throw new RpcException({ code: 'OUT_OF_STOCK', message: 'no such item' });
  }
}

async function freeTcpPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe.each([
  ['exceptionFilter: true', true],
  ['exceptionFilter: { badGateway: true }', { badGateway: true }],
] as const)('a TCP microservice handler with %s', (_label, exceptionFilter) => {
  it("answers a refusal as Nest does (Internal server error) and keeps an RpcException's error, instead of never answering", async () => {
    @Module({
      imports: [ResilienceModule.forRoot({ policies: {}, exceptionFilter })],
      controllers: [TcpController],
    })
    class TcpModule {}
    const port = await freeTcpPort();
    const moduleRef = await Test.createTestingModule({ imports: [TcpModule] }).compile();
    const app = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    running.push(app);
    await app.listen();
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    try {
      const answer = (pattern: string) =>
        firstValueFrom(client.send(pattern, {}).pipe(timeout(2000))).catch(
          (error: unknown) => error,
        );
      expect(await answer('refused')).toEqual({
        status: 'error',
        message: 'Internal server error',
      });
      expect(await answer('rpc')).toEqual({ code: 'OUT_OF_STOCK', message: 'no such item' });
    } finally {
      client.close();
    }
  });
});
