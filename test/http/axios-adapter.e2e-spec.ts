import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpModule, HttpService } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Readable } from 'node:stream';
import axios, { type AxiosError } from 'axios';
import { firstValueFrom } from 'rxjs';
import { Ambient, FakeClock, Resilience, RetryBudget } from '../../lib/core/index.js';
import {
  type AxiosNotRepeatableError,
  BodyNotReplayableError,
  NotRepeatableError,
  ResilientHttpModule,
  getResilientHttpServiceToken,
  installResilientAdapter,
  markRepeatable,
} from '../../lib/http/index.js';
import { ResilienceModule } from '../../lib/nest/index.js';
import { answer, loopbackServers, reset } from '../support/loopback-server.js';
import { type PolicyChanges, jumpingPolicy } from '../support/jumping-policy.js';

const { serve, closeAll } = loopbackServers();
afterEach(closeAll);

/** An axios instance under a policy on a fake clock that jumps each backoff at once. */
async function resilientAxios(changes: PolicyChanges = {}) {
  const { clock, events, policy } = jumpingPolicy('api', changes);
  const instance = axios.create();
  const counts = { request: 0, response: 0, responseError: 0 };
  instance.interceptors.request.use((config) => {
    counts.request++;
    config.headers.set('X-Trace', 't1');
    return config;
  });
  instance.interceptors.response.use(
    (response) => (counts.response++, response),
    (error: unknown) => (counts.responseError++, Promise.reject(error)),
  );
  const hosts = await installResilientAdapter(instance, { policy });
  return { clock, counts, events, hosts, instance };
}

/** How many times `name` appears in a request's raw header lines, and its values. */
function headerLines(raw: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
  return values;
}

describe('axios adapter seam', () => {
  it('runs interceptors once per logical call and sends their header once per attempt', async () => {
    const server = await serve((n, req, res) => (n === 0 ? reset(req) : answer(res, 200, { n })));
    const { counts, instance } = await resilientAxios();
    const response = await instance.get(`${server.url}/x`);
    expect(response.data).toEqual({ n: 1 });
    expect(server.seen.map((r) => headerLines(r.rawHeaders, 'x-trace'))).toEqual([['t1'], ['t1']]);
    // The nested-retry marker goes on the first attempt only.
    expect(server.seen.map((r) => r.headers['x-nresilience-retrying'])).toEqual(['1', undefined]);
    expect(counts).toEqual({ request: 1, response: 1, responseError: 0 });
  });

  it('gives the final 5xx to the response interceptors as the usual axios error, once', async () => {
    const server = await serve((n, _req, res) => answer(res, 502, { n }));
    const { counts, instance } = await resilientAxios();
    const failure = (await instance.get(`${server.url}/x`).catch((e: unknown) => e)) as AxiosError;
    expect([failure.isAxiosError, failure.response?.status, failure.response?.data]).toEqual([
      true,
      502,
      { n: 2 },
    ]);
    expect(server.seen).toHaveLength(3);
    expect(counts).toEqual({ request: 1, response: 0, responseError: 1 });
  });

  it('returns a 4xx as the usual axios error untouched, sent once', async () => {
    const server = await serve((_n, _req, res) => answer(res, 409, { error: 'conflict' }));
    const { instance } = await resilientAxios();
    const failure = (await instance
      .put(`${server.url}/x`, { a: 1 })
      .catch((e: unknown) => e)) as AxiosError;
    expect([failure.response?.status, failure.response?.data, server.seen.length]).toEqual([
      409,
      { error: 'conflict' },
      1,
    ]);
  });

  it('rejects a POST reset once with NotRepeatableError that axios also takes for its error, sent once', async () => {
    const server = await serve((_n, req) => reset(req));
    const { counts, events, instance } = await resilientAxios();
    const failure = (await instance
      .post(`${server.url}/orders`, { item: 1 })
      .catch((e: unknown) => e)) as AxiosNotRepeatableError;
    expect(failure).toBeInstanceOf(NotRepeatableError);
    expect(failure.message).toBe(
      `POST ${server.url}/orders failed (ECONNRESET) and was not retried: POST is not idempotent and the server may have acted on it. ` +
        'If the server deduplicates by Idempotency-Key, mark the request with markRepeatable(config, key) to let it retry',
    );
    // What an interceptor or a catchError written for axios reads keeps working.
    expect([
      axios.isAxiosError(failure),
      failure.code,
      failure.response,
      failure.config?.url,
      failure.method,
    ]).toEqual([true, 'ECONNRESET', undefined, `${server.url}/orders`, 'POST']);
    const cause = failure.cause as AxiosError;
    expect([axios.isAxiosError(cause), cause.code]).toEqual([true, 'ECONNRESET']);
    expect(failure.toJSON()).toMatchObject({
      name: 'NotRepeatableError',
      message: failure.message,
      code: 'ECONNRESET',
      config: expect.objectContaining({ method: 'post' }),
    });
    expect(server.seen).toHaveLength(1);
    expect(counts).toEqual({ request: 1, response: 0, responseError: 1 });
    expect(events.filter((e) => e.isTerminal).map((e) => [e.kind, e.reason, e.verdict])).toEqual([
      ['failed', 'notRepeatable', 'Transient'],
    ]);
  });

  it('rejects a POST whose attempt timed out with NotRepeatableError, its cause the attempt timeout', async () => {
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    const server = await serve(() => arrived());
    const { clock, events, instance } = await resilientAxios({ attemptTimeout: 100 });
    const call = instance.post(`${server.url}/orders`, { item: 1 }).catch((e: unknown) => e);
    await received;
    await clock.advance(100);
    const failure = (await call) as AxiosNotRepeatableError;
    expect(failure).toBeInstanceOf(NotRepeatableError);
    expect(failure.message).toContain(
      `POST ${server.url}/orders failed (AttemptTimeoutError) and was not retried`,
    );
    // What an interceptor written for axios reads of a timeout: its code and the request's config.
    expect([
      (failure.cause as Error).name,
      axios.isAxiosError(failure),
      failure.code,
      failure.config?.url,
      failure.config?.method,
    ]).toEqual(['AttemptTimeoutError', true, 'ECONNABORTED', `${server.url}/orders`, 'post']);
    expect(server.seen).toHaveLength(1);
    expect(events.filter((e) => e.isTerminal).map((e) => e.reason)).toEqual(['notRepeatable']);
  });

  it('gives a 5xx to a POST as the usual axios error (as fetch returns the Response), sent once', async () => {
    const server = await serve((n, _req, res) => answer(res, 502, { n }));
    const { events, instance } = await resilientAxios();
    const failure = (await instance
      .post(`${server.url}/orders`, { item: 1 })
      .catch((e: unknown) => e)) as AxiosError;
    expect([
      failure instanceof NotRepeatableError,
      failure.isAxiosError,
      failure.response?.status,
      failure.response?.data,
    ]).toEqual([false, true, 502, { n: 0 }]);
    expect(server.seen).toHaveLength(1);
    expect(events.filter((e) => e.isTerminal).map((e) => e.reason)).toEqual(['notRepeatable']);
  });

  it('gives the usual axios error to a POST under a single-attempt policy (attemptsExhausted)', async () => {
    const server = await serve((_n, req) => reset(req));
    const { events, instance } = await resilientAxios({ attempts: 1 });
    const failure = (await instance
      .post(`${server.url}/orders`, { item: 1 })
      .catch((e: unknown) => e)) as AxiosError;
    expect([failure instanceof NotRepeatableError, failure.code]).toEqual([false, 'ECONNRESET']);
    expect(events.filter((e) => e.isTerminal).map((e) => e.reason)).toEqual(['attemptsExhausted']);
  });

  it('retries a POST with an Idempotency-Key, sending the same key and body on each attempt', async () => {
    const server = await serve((n, req, res) => (n % 2 === 0 ? reset(req) : answer(res, 201)));
    const { instance } = await resilientAxios();
    const response = await instance.post(
      `${server.url}/orders`,
      { item: 2 },
      markRepeatable({}, 'order-2'),
    );
    expect(response.status).toBe(201);
    expect(server.seen.map((r) => [r.headers['idempotency-key'], r.body.toString()])).toEqual([
      ['"order-2"', '{"item":2}'],
      ['"order-2"', '{"item":2}'],
    ]);
  });

  it('refuses to send a stream data again, saying why in axios terms', async () => {
    const server = await serve((_n, req) => reset(req));
    const { instance } = await resilientAxios();
    const data = Readable.from([Buffer.from('part 1,'), Buffer.from('part 2')]);
    const failure = (await instance
      .put(`${server.url}/upload`, data)
      .catch((e: unknown) => e)) as BodyNotReplayableError;
    expect(failure).toBeInstanceOf(BodyNotReplayableError);
    expect([failure.message, failure.limit, (failure.cause as AxiosError).code]).toEqual([
      'the request data is a stream, which axios sends as it reads it and cannot send again: not retrying it (pass a Buffer or a string as data to let it retry)',
      undefined,
      'ECONNRESET',
    ]);
    expect(server.seen.map((r) => r.body.toString())).toEqual(['part 1,part 2']);
  });

  it('retries a GET whose body broke after the headers (axios rejects it with the 200 attached), never taking it for a success', async () => {
    const server = await serve((n, req, res) => {
      if (n > 0) return answer(res, 200, { whole: true });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"whole":');
      setImmediate(() => req.socket.destroy());
    });
    const { counts, events, instance } = await resilientAxios();
    const response = await instance.get(`${server.url}/x`);
    expect([response.status, response.data, server.seen.length]).toEqual([200, { whole: true }, 2]);
    expect(events.filter((e) => e.kind === 'attempt').map((e) => [e.verdict, e.error])).toEqual([
      ['Transient', 'AxiosError'],
      ['Ok', undefined],
    ]);
    expect(counts).toEqual({ request: 1, response: 1, responseError: 0 });
  });

  it('a POST whose body broke after the headers is NotRepeatable; a 304 is the usual axios error, sent once', async () => {
    const server = await serve((n, req, res) => {
      if (req.method === 'GET') {
        res.writeHead(304, { etag: '"v1"' });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"id":');
      setImmediate(() => req.socket.destroy());
    });
    const { instance } = await resilientAxios();
    const broken = (await instance
      .post(`${server.url}/orders`, { item: 1 })
      .catch((e: unknown) => e)) as AxiosNotRepeatableError;
    expect([
      broken instanceof NotRepeatableError,
      (broken.cause as AxiosError).response?.status,
    ]).toEqual([true, 200]);
    const notModified = (await instance
      .get(`${server.url}/x`, { headers: { 'if-none-match': '"v1"' } })
      .catch((e: unknown) => e)) as AxiosError;
    expect([notModified.isAxiosError, notModified.response?.status, notModified.message]).toEqual([
      true,
      304,
      'Request failed with status code 304',
    ]);
    expect(server.seen.map((r) => r.method)).toEqual(['POST', 'GET']);
  });

  it('leaves a bounded attempt’s end to the policy’s signal (axios timeout 0, the bound in the header), and issues nothing with no time left', async () => {
    const server = await serve((_n, _req, res) => answer(res, 200));
    const clock = new FakeClock();
    const policy = Resilience.default.with({
      clock,
      budget: RetryBudget.none,
      deadline: 5000,
      useAmbientDeadline: true,
    });
    const instance = axios.create({ timeout: 30 });
    const timeouts: number[] = [];
    const http = axios.getAdapter('http');
    instance.defaults.adapter = (config) => (timeouts.push(config.timeout ?? -1), http(config));
    await installResilientAdapter(instance, { policy });
    await Ambient.run({ remaining: 700, clock }, () => instance.get(`${server.url}/x`));
    await instance.get(`${server.url}/x`);
    expect(timeouts).toEqual([0, 0]);
    expect(server.seen.map((r) => r.headers['x-nresilience-remaining-ms'])).toEqual([
      '700',
      '5000',
    ]);
    const failure = await Ambient.run({ remaining: 0, clock }, () =>
      instance.get(`${server.url}/x`).catch((e: unknown) => e),
    );
    expect((failure as Error).name).toBe('DeadlineExceededError');
    expect([server.seen.length, timeouts.length]).toEqual([2, 2]);
  });
});

describe('axios seam against a server that never answers', () => {
  it('always ends a slow call with the library’s error, never axios’s own ECONNABORTED timeout', async () => {
    const server = await serve(() => undefined);
    const instance = axios.create();
    await installResilientAdapter(instance, {
      policy: Resilience.default.with({ attempts: 1, budget: RetryBudget.none, attemptTimeout: 6 }),
    });
    const names: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const failures = await Promise.all(
        Array.from({ length: 20 }, () =>
          instance.get(`${server.url}/hang`).then(
            () => 'answered',
            (error: Error & { code?: string }) =>
              error.name === 'AttemptTimeoutError'
                ? error.name
                : `${error.name} ${error.code} ${error.message}`,
          ),
        ),
      );
      names.push(...failures);
    }
    expect(names.filter((name) => name !== 'AttemptTimeoutError')).toEqual([]);
    expect(names).toHaveLength(200);
  });
});

describe('@nestjs/axios HttpService through ResilientHttpModule', () => {
  it('runs HttpService calls under the named policy with per-host state', async () => {
    const server = await serve((n, req, res) => (n === 0 ? reset(req) : answer(res, 200, { n })));
    @Module({
      imports: [
        ResilienceModule.forRoot({
          policies: { api: { attempts: 2, backoff: { type: 'none' } } },
          logging: 'off',
          telemetry: false,
        }),
        HttpModule,
        ResilientHttpModule.register({ policy: 'api', httpService: true }),
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    try {
      const http = app.get(HttpService);
      const response = await firstValueFrom(http.get(`${server.url}/x`));
      expect([response.status, response.data, server.seen.length]).toEqual([200, { n: 1 }, 2]);
      const hosts = app.get(getResilientHttpServiceToken('api'));
      expect(hosts.entries().map((e: { key: string }) => e.key)).toEqual([
        new URL(server.url).origin,
      ]);
    } finally {
      await app.close();
    }
  });
});
