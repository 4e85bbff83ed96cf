import { describe, expect, it } from '@jest/globals';
import type { ArgumentsHost } from '@nestjs/common';
import { type Observable, firstValueFrom } from 'rxjs';
import { AttemptTimeoutError, CallRejectedError, DeadlineExceededError } from '../core/errors.js';
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
  return { getType: () => 'http', switchToHttp: () => ({ getResponse: () => response }) } as unknown as ArgumentsHost;
}

describe('ResilienceExceptionFilter', () => {
  it.each([
    [1200, '2'],
    [1000, '1'],
    [1, '1'],
    [0, '1'],
    [Infinity, '86400'],
    [1e24, '86400'],
  ])('rounds retryAfter %d ms up to Retry-After: %s (whole seconds ≥ 1, at most a day), and the body says the same', (ms, header) => {
    const answer = ResilienceExceptionFilter.problemFor(new CallRejectedError('BudgetExhausted', ms))!;
    expect(answer.retryAfter).toBe(header);
    expect(answer.body.detail).toBe(`A call to a dependency of this service failed and was not retried: retries to that dependency are paused while its retry budget is spent (BudgetExhausted). Try again in ${header} s.`);
  });

  it('builds the 503 and 504 problem documents without policy names, messages or stacks', () => {
    const rejected = ResilienceExceptionFilter.problemFor(new CallRejectedError('DependencyUnavailable', undefined, { policy: 'secret-internal' }))!;
    expect(rejected.retryAfter).toBeUndefined();
    expect(rejected.body).toEqual({
      type: 'urn:nresilience:problem:call-rejected',
      title: 'Service Unavailable',
      status: 503,
      detail: 'A dependency of this service is not being called right now: its circuit breaker is open (DependencyUnavailable). Try again later.',
      reason: 'DependencyUnavailable',
    });
    expect(JSON.stringify(rejected.body)).not.toContain('secret-internal');
    const deadline = ResilienceExceptionFilter.problemFor(new DeadlineExceededError(1000))!;
    expect(deadline.body).toMatchObject({ type: 'urn:nresilience:problem:deadline-exceeded', status: 504, reason: 'DeadlineExceeded' });
    const timeout = ResilienceExceptionFilter.problemFor(new AttemptTimeoutError(1000))!;
    expect([timeout.body.status, timeout.body.reason, timeout.retryAfter]).toEqual([504, 'AttemptTimeout', undefined]);
    expect(ResilienceExceptionFilter.problemFor(new Error('other'))).toBeUndefined();
  });

  it('writes through the Node response API when no adapter host is injected', () => {
    const { response, headers } = fakeResponse();
    new ResilienceExceptionFilter().catch(new CallRejectedError('BudgetExhausted', 1200), httpHost(response));
    expect(response.statusCode).toBe(503);
    expect(headers).toEqual({ 'Content-Type': 'application/problem+json', 'Retry-After': '2' });
    expect(JSON.parse(response.body)).toMatchObject({ status: 503, reason: 'BudgetExhausted' });
  });

  it("answers as Nest does over another RPC transport (a TCP microservice, whose context is not gRPC metadata); rethrows in a WebSocket context", async () => {
    const error = new DeadlineExceededError(5);
    const host = { getType: () => 'rpc', switchToRpc: () => ({ getContext: () => ({ args: ['sum'] }), getData: () => [1, 2] }) } as unknown as ArgumentsHost;
    // A rethrow from an RPC filter is never answered: the TCP caller would wait for ever.
    const answer = new ResilienceExceptionFilter().catch(error, host) as Observable<never>;
    await expect(firstValueFrom(answer)).rejects.toEqual({ status: 'error', message: 'Internal server error' });
    expect(() => new ResilienceExceptionFilter().catch(error, { getType: () => 'ws' } as unknown as ArgumentsHost)).toThrow(error);
  });
});
