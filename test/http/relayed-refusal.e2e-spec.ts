import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BadGatewayException,
  Controller,
  Get,
  type INestApplication,
  Module,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import axios from 'axios';
import { Ambient, Breaker, CallRejectedError, RelayedRefusalError } from '../../lib/core/index.js';
import {
  type ResilientFetch,
  InjectResilientFetch,
  ResilientHttpModule,
  createResilientFetch,
  installResilientAdapter,
} from '../../lib/http/index.js';
import { CALL_REJECTED_PROBLEM_TYPE } from '../../lib/http/relayed-refusal.js';
import {
  ProblemTypes,
  ResilienceContextModule,
  ResilienceExceptionFilter,
  ResilienceModule,
} from '../../lib/nest/index.js';
import {
  LoopbackServer,
  type Script,
  answer,
  loopbackServers,
} from '../support/loopback-server.js';
import { jumpingPolicy } from '../support/jumping-policy.js';

/** Hops that understand each other: a refusal from a service below is passed up as that refusal. */

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

const refusalBody = (reason: string, type = CALL_REJECTED_PROBLEM_TYPE) => ({
  type,
  title: 'Service Unavailable',
  status: 503,
  detail: 'refused',
  reason,
});
const refusing =
  (reason = 'BudgetExhausted', retryAfter = '1', type = CALL_REJECTED_PROBLEM_TYPE): Script =>
  (_n, _req, res) =>
    answer(res, 503, refusalBody(reason, type), {
      'content-type': 'application/problem+json',
      'retry-after': retryAfter,
    });

describe('the resilient fetch reading a refusal from a service below', () => {
  it('rejects at once with RelayedRefusalError: same reason and hint, one request, no wait, no retry', async () => {
    const server = await serve(refusing('BudgetExhausted', '2'));
    const { clock, events, policy } = jumpingPolicy('api');
    const http = createResilientFetch({ policy });
    const failure = await http(`${server.url}/orders`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RelayedRefusalError);
    expect(failure).toBeInstanceOf(CallRejectedError);
    const refusal = failure as RelayedRefusalError;
    expect([refusal.reason, refusal.retryAfter, refusal.origin, refusal.message]).toEqual([
      'BudgetExhausted',
      2000,
      server.url,
      `${server.url} refused the call: BudgetExhausted (retry after 2000ms)`,
    ]);
    expect(server.seen).toHaveLength(1);
    // Not waited for (no Retry-After wait, no guarded pause): the fake clock never moved.
    expect(clock.now()).toBe(0);
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.verdict])).toEqual([
      ['failed', 'permanent', 'Permanent'],
    ]);
  });

  it('is never evidence against the host: twenty relayed refusals leave a 5-failure breaker closed', async () => {
    const server = await serve(refusing('DependencyUnavailable', '3'));
    const { policy } = jumpingPolicy('api', { breaker: Breaker.with({ consecutiveFailures: 5 }) });
    const http = createResilientFetch({ policy });
    for (let i = 0; i < 20; i++)
      await expect(http(`${server.url}/x`)).rejects.toBeInstanceOf(RelayedRefusalError);
    expect(server.seen).toHaveLength(20);
    expect(http.hosts.entries(1)[0]!.breaker?.state).toBe('closed');
  });

  it('leaves any other 503 problem as it was: Throttled by its Retry-After, retried, the last answer returned with its body', async () => {
    const server = await serve(refusing('BudgetExhausted', '1', 'urn:example:maintenance'));
    const { events, policy } = jumpingPolicy('api');
    const http = createResilientFetch({ policy });
    const response = await http(`${server.url}/x`);
    expect(response.status).toBe(503);
    expect(((await response.json()) as { type: string }).type).toBe('urn:example:maintenance');
    expect(server.seen).toHaveLength(3);
    expect(events.filter((e) => e.kind === 'retrying').map((e) => e.delay)).toEqual([1000, 1000]);
  });

  it('leaves a refusal with an unknown reason, or not JSON, to the HTTP rules', async () => {
    const unknown = await serve(refusing('Sleepy'));
    const text = await serve((_n, _req, res) => {
      res.writeHead(503, { 'content-type': 'application/problem+json' });
      res.end('not json');
    });
    const http = createResilientFetch({ policy: jumpingPolicy('api').policy });
    expect((await http(`${unknown.url}/x`)).status).toBe(503);
    expect((await http(`${text.url}/x`)).status).toBe(503);
    expect(unknown.seen).toHaveLength(3);
  });

  it('spells the problem type as the exception filter writes it, and the filter answers a relayed refusal as the hop below did', () => {
    expect(CALL_REJECTED_PROBLEM_TYPE).toBe(ProblemTypes.callRejected);
    const answer = ResilienceExceptionFilter.problemFor(
      new RelayedRefusalError('DependencyUnavailable', 2500, 'http://data'),
    )!;
    expect([answer.body.status, answer.body.type, answer.body.reason, answer.retryAfter]).toEqual([
      503,
      ProblemTypes.callRejected,
      'DependencyUnavailable',
      '3',
    ]);
  });

  it('a single-shot call makes one attempt and still stamps the nested-retry marker', async () => {
    const server = await serve((_n, _req, res) => answer(res, 500));
    const http = createResilientFetch({ policy: jumpingPolicy('api').policy });
    const response = await Ambient.singleShot(() => http(`${server.url}/x`));
    expect(response.status).toBe(500);
    expect(server.seen.map((r) => r.headers['x-nresilience-retrying'])).toEqual(['1']);
  });
});

describe('the axios seam reading a refusal from a service below', () => {
  async function resilientAxios(changes = {}) {
    const { clock, events, policy } = jumpingPolicy('api', changes);
    const instance = axios.create();
    const hosts = await installResilientAdapter(instance, { policy });
    return { clock, events, hosts, instance };
  }

  it('rejects at once with RelayedRefusalError: same reason and hint, one request, no wait, no retry', async () => {
    const server = await serve(refusing('QuotaExhausted', '2'));
    const { clock, events, instance } = await resilientAxios();
    const failure = await instance.get(`${server.url}/orders`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RelayedRefusalError);
    const refusal = failure as RelayedRefusalError;
    expect([refusal.reason, refusal.retryAfter, refusal.origin]).toEqual([
      'QuotaExhausted',
      2000,
      server.url,
    ]);
    expect(server.seen).toHaveLength(1);
    expect(clock.now()).toBe(0);
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.verdict])).toEqual([
      ['failed', 'permanent', 'Permanent'],
    ]);
  });

  it('reads the refusal whatever validateStatus says, and from a body axios left as text', async () => {
    const server = await serve(refusing('DependencyUnavailable', '3'));
    const { instance } = await resilientAxios();
    const accepting = instance.get(`${server.url}/a`, { validateStatus: () => true });
    await expect(accepting).rejects.toMatchObject({
      reason: 'DependencyUnavailable',
      retryAfter: 3000,
    });
    const text = instance.get(`${server.url}/b`, {
      responseType: 'text',
      transitional: { forcedJSONParsing: false },
    });
    await expect(text).rejects.toBeInstanceOf(RelayedRefusalError);
    expect(server.seen).toHaveLength(2);
  });

  it('is never evidence against the host, and leaves any other 503 problem to the HTTP rules', async () => {
    const refusals = await serve(refusing('BudgetExhausted', '1'));
    const other = await serve(refusing('BudgetExhausted', '1', 'urn:example:maintenance'));
    const { hosts, instance } = await resilientAxios({
      breaker: Breaker.with({ consecutiveFailures: 5 }),
    });
    for (let i = 0; i < 20; i++)
      await expect(instance.get(`${refusals.url}/x`)).rejects.toBeInstanceOf(RelayedRefusalError);
    expect(refusals.seen).toHaveLength(20);
    expect(hosts.entries(1)[0]!.breaker?.state).toBe('closed');
    const failure = (await instance.get(`${other.url}/x`).catch((error: unknown) => error)) as {
      response?: { status: number };
    };
    expect(failure).not.toBeInstanceOf(RelayedRefusalError);
    expect(failure.response?.status).toBe(503);
    expect(other.seen).toHaveLength(3);
  });
});

// A chain of real Nest services on loopback: frontend → backend → a service that refuses.
let belowUrl = '';
let backendUrl = '';
const fast = {
  attempts: 3,
  backoff: { type: 'exponential', transientBase: 1, maximumDelay: 1 },
  budget: 'none',
} as const;

@Controller('work')
class BackendController {
  constructor(@InjectResilientFetch('below') private readonly http: ResilientFetch) {}
  @Get()
  async work(): Promise<{ status: number }> {
    const response = await this.http(`${belowUrl}/work`);
    if (response.status >= 500) throw new BadGatewayException(`below answered ${response.status}`);
    return { status: response.status };
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { below: fast },
      exceptionFilter: true,
      telemetry: false,
      logging: 'off',
    }),
    ResilientHttpModule.register({ policy: 'below' }),
    ResilienceContextModule.forRoot({ nested: 'singleShot' }),
  ],
  controllers: [BackendController],
})
class Backend {}

@Controller('start')
class FrontendController {
  constructor(@InjectResilientFetch('backend') private readonly http: ResilientFetch) {}
  @Get()
  async start(): Promise<{ status: number }> {
    return { status: (await this.http(`${backendUrl}/work`)).status };
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: { backend: { ...fast, attempts: 2 } },
      exceptionFilter: true,
      telemetry: false,
      logging: 'off',
    }),
    ResilientHttpModule.register({ policy: 'backend' }),
    ResilienceContextModule.forRoot(),
  ],
  controllers: [FrontendController],
})
class Frontend {}

describe('ResilienceContextModule.forRoot({ nested })', () => {
  it("takes 'report' and 'singleShot', and refuses anything else naming the field", () => {
    expect(() => ResilienceContextModule.forRoot({ nested: 'report' })).not.toThrow();
    expect(() => ResilienceContextModule.forRoot({ nested: 'always' as never })).toThrow(
      "nested: \"always\" is invalid: must be 'report' or 'singleShot'",
    );
  });
});

describe('a chain of Nest services passing a refusal up, and single-shot on marked requests', () => {
  let below: LoopbackServer;
  let script: Script = refusing();
  const apps: INestApplication[] = [];
  let frontendUrl = '';

  beforeAll(async () => {
    below = await LoopbackServer.start((n, req, res, seen) => script(n, req, res, seen));
    belowUrl = below.url;
    for (const module of [Backend, Frontend]) {
      const app = await NestFactory.create(module, { logger: false, abortOnError: false });
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      if (module === Backend) backendUrl = url;
      else frontendUrl = url;
    }
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    await below?.close();
  });

  it('answers the frontend caller with the refusal of the service below: 503, the same reason and Retry-After, one request below', async () => {
    script = refusing('DependencyUnavailable', '4');
    below.seen.length = 0;
    const response = await fetch(`${frontendUrl}/start`);
    const body = (await response.json()) as { type: string; reason: string };
    expect([response.status, response.headers.get('retry-after'), body.type, body.reason]).toEqual([
      503,
      '4',
      ProblemTypes.callRejected,
      'DependencyUnavailable',
    ]);
    expect(below.seen).toHaveLength(1);
  });

  it("nested: 'singleShot': the backend sends the frontend's marked first attempt on once (marked), and retries the unmarked retry itself", async () => {
    script = (_n, _req, res) => answer(res, 500);
    below.seen.length = 0;
    const response = await fetch(`${frontendUrl}/start`);
    // The backend answered 502 to both of the frontend's attempts; the frontend returns what it got.
    expect([response.status, await response.json()]).toEqual([200, { status: 502 }]);
    // Frontend attempt 1 (marked): one request below, marked. Attempt 2 (unmarked): three, the first marked.
    expect(below.seen.map((r) => r.headers['x-nresilience-retrying'] ?? '-')).toEqual([
      '1',
      '1',
      '-',
      '-',
    ]);
  });
});
