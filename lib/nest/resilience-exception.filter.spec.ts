import { describe, expect, it } from '@jest/globals';
import { type ArgumentsHost, HttpException } from '@nestjs/common';
import { Metadata } from '@grpc/grpc-js';
import { type Observable, firstValueFrom } from 'rxjs';
import {
  AttemptStalledError,
  AttemptTimeoutError,
  CallRejectedError,
  DeadlineExceededError,
  type RejectionReason,
} from '../core/index.js';
import { ResilienceExceptionFilter } from './resilience-exception.filter.js';

function fakeResponse() {
  const headers: Record<string, string> = {};
  const response = {
    statusCode: 200,
    headersSent: false,
    body: '',
    setHeader: (name: string, value: string) => void (headers[name] = value),
    end: (body: string) => void (response.body = body),
  };
  return { response, headers };
}

function httpHost(response: object): ArgumentsHost {
  return {
    getType: () => 'http',
    switchToHttp: () => ({ getResponse: () => response }),
  } as unknown as ArgumentsHost;
}

describe('ResilienceExceptionFilter', () => {
  it.each([
    [1200, '2'],
    [1000, '1'],
    [1, '1'],
    [0, '1'],
    [Infinity, '86400'],
    [1e24, '86400'],
  ])(
    'rounds retryAfter %d ms up to Retry-After: %s (whole seconds ≥ 1, at most a day), and the body says the same',
    (ms, header) => {
      const answer = ResilienceExceptionFilter.problemFor(
        new CallRejectedError('BudgetExhausted', ms),
      )!;
      expect(answer.retryAfter).toBe(header);
      expect(answer.body.detail).toBe(
        `A call to a dependency of this service failed and was not retried: retries to that dependency are paused while its retry budget is spent (BudgetExhausted). Try again in ${header} s.`,
      );
    },
  );

  it('builds the 503 and 504 problem documents without policy names, messages or stacks', () => {
    const rejected = ResilienceExceptionFilter.problemFor(
      new CallRejectedError('DependencyUnavailable', undefined, { policy: 'secret-internal' }),
    )!;
    expect(rejected.retryAfter).toBeUndefined();
    expect(rejected.body).toEqual({
      type: 'urn:nresilience:problem:call-rejected',
      title: 'Service Unavailable',
      status: 503,
      detail:
        'A dependency of this service is not being called right now: its circuit breaker is open (DependencyUnavailable). Try again later.',
      reason: 'DependencyUnavailable',
    });
    expect(JSON.stringify(rejected.body)).not.toContain('secret-internal');
    const deadline = ResilienceExceptionFilter.problemFor(new DeadlineExceededError(1000))!;
    expect(deadline.body).toMatchObject({
      type: 'urn:nresilience:problem:deadline-exceeded',
      status: 504,
      reason: 'DeadlineExceeded',
    });
    const timeout = ResilienceExceptionFilter.problemFor(new AttemptTimeoutError(1000))!;
    expect([timeout.body.status, timeout.body.reason, timeout.retryAfter]).toEqual([
      504,
      'AttemptTimeout',
      undefined,
    ]);
    expect(ResilienceExceptionFilter.problemFor(new Error('other'))).toBeUndefined();
  });

  it('writes through the Node response API when no adapter host is injected', () => {
    const { response, headers } = fakeResponse();
    new ResilienceExceptionFilter().catch(
      new CallRejectedError('BudgetExhausted', 1200),
      httpHost(response),
    );
    expect(response.statusCode).toBe(503);
    expect(headers).toEqual({ 'Content-Type': 'application/problem+json', 'Retry-After': '2' });
    expect(JSON.parse(response.body)).toMatchObject({ status: 503, reason: 'BudgetExhausted' });
  });

  it('answers as Nest does over another RPC transport (a TCP microservice, whose context is not gRPC metadata); rethrows in a WebSocket context', async () => {
    const error = new DeadlineExceededError(5);
    const host = {
      getType: () => 'rpc',
      switchToRpc: () => ({ getContext: () => ({ args: ['sum'] }), getData: () => [1, 2] }),
    } as unknown as ArgumentsHost;
    // A rethrow from an RPC filter is never answered: the TCP caller would wait for ever.
    const answer = new ResilienceExceptionFilter().catch(error, host) as Observable<never>;
    await expect(firstValueFrom(answer)).rejects.toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    expect(() =>
      new ResilienceExceptionFilter().catch(error, {
        getType: () => 'ws',
      } as unknown as ArgumentsHost),
    ).toThrow(error);
  });

  it('answers a refusal with a reason outside the documented four with a generic sentence, never "undefined"', () => {
    const overloaded = ResilienceExceptionFilter.problemFor(
      new CallRejectedError('Overloaded' as RejectionReason, 2500),
    )!;
    expect([
      overloaded.body.status,
      overloaded.body.reason,
      overloaded.body.detail,
      overloaded.retryAfter,
    ]).toEqual([
      503,
      'Overloaded',
      'A dependency of this service is not being called right now (Overloaded). Try again in 3 s.',
      '3',
    ]);
    const missing = ResilienceExceptionFilter.problemFor(
      new CallRejectedError(undefined as unknown as RejectionReason, undefined),
    )!;
    expect([missing.body.reason, missing.body.detail]).toEqual([
      'CallRejected',
      'A dependency of this service is not being called right now (CallRejected). Try again later.',
    ]);
    const inherited = ResilienceExceptionFilter.problemFor(
      new CallRejectedError('toString' as RejectionReason, undefined),
    )!;
    expect(inherited.body.detail).toBe(
      'A dependency of this service is not being called right now (toString). Try again later.',
    );
  });

  it('finds the library error wherever it is wrapped (problemFor(error) as problemFor(error.cause)), but not inside an HttpException', () => {
    const refusal = new CallRejectedError('DependencyUnavailable', 1500);
    const serviceError = Object.assign(new Error('14 UNAVAILABLE: call rejected'), {
      code: 14,
      details: 'call rejected',
      metadata: new Metadata(),
      cause: refusal,
    });
    expect(ResilienceExceptionFilter.problemFor(serviceError)).toEqual(
      ResilienceExceptionFilter.problemFor(refusal),
    );
    expect(ResilienceExceptionFilter.problemFor(serviceError)!.retryAfter).toBe('2');
    const deep = new Error('outer', {
      cause: new Error('middle', { cause: new DeadlineExceededError(100) }),
    });
    expect(ResilienceExceptionFilter.problemFor(deep)!.body.status).toBe(504);
    expect(
      ResilienceExceptionFilter.problemFor(new HttpException('mine', 409, { cause: refusal })),
    ).toBeUndefined();
    const stalled = ResilienceExceptionFilter.problemFor(new AttemptStalledError(2000, 10))!;
    expect([stalled.body.status, stalled.body.reason, stalled.retryAfter]).toEqual([
      504,
      'AttemptStalled',
      undefined,
    ]);
  });

  it('answers a gRPC handler whose outbound call was refused (a ServiceError, ours as cause) UNAVAILABLE with pushback, a deadline DEADLINE_EXCEEDED', async () => {
    const host = {
      getType: () => 'rpc',
      switchToRpc: () => ({ getContext: () => new Metadata(), getData: () => ({}) }),
    } as unknown as ArgumentsHost;
    const wrapped = (cause: Error) =>
      Object.assign(new Error('wrapped'), {
        code: 14,
        details: 'x',
        metadata: new Metadata(),
        cause,
      });
    const refused = (await firstValueFrom(
      new ResilienceExceptionFilter().catch(
        wrapped(new CallRejectedError('BudgetExhausted', 1234.2)),
        host,
      ) as Observable<never>,
    ).catch((e: unknown) => e)) as { code: number; metadata: Metadata };
    expect([refused.code, refused.metadata.get('grpc-retry-pushback-ms')]).toEqual([14, ['1235']]);
    const late = (await firstValueFrom(
      new ResilienceExceptionFilter().catch(
        wrapped(new AttemptStalledError(10, 0)),
        host,
      ) as Observable<never>,
    ).catch((e: unknown) => e)) as { code: number };
    expect(late.code).toBe(4);
  });
});
