/** `classifier: 'grpc'` in a registry's config (DESIGN §4): gRPC statuses judged in Nest, `HttpException`s still answers. */
import { describe, expect, it } from '@jest/globals';
import { NotFoundException } from '@nestjs/common';
import { FakeClock, GrpcStatus } from '../core/index.js';
import { PolicyRegistry } from './policy-registry.js';

const status = (code: number) => Object.assign(new Error(`status ${code}`), { code, details: '' });

function registry(): PolicyRegistry {
  return PolicyRegistry.create({
    clock: new FakeClock(),
    defaults: { attempts: 3, backoff: { type: 'none' } },
    policies: {
      inventory: { classifier: 'grpc' },
      pricing: {
        classifier: {
          base: 'grpc',
          transient: ['FAILED_PRECONDITION'],
          permanent: ['UNAVAILABLE'],
        },
      },
      viaDefaults: {},
    },
  });
}

async function attempts(
  registry: PolicyRegistry,
  name: string,
  error: unknown,
): Promise<[number, string]> {
  const result = await registry.handle(name).tryRun(() => Promise.reject(error));
  return [result.attempts.length, result.reason];
}

describe("classifier: 'grpc' in config", () => {
  it('retries UNAVAILABLE and INTERNAL to the last attempt, answers NOT_FOUND and INVALID_ARGUMENT at once', async () => {
    const r = registry();
    expect(await attempts(r, 'inventory', status(GrpcStatus.UNAVAILABLE))).toEqual([
      3,
      'attemptsExhausted',
    ]);
    expect(await attempts(r, 'inventory', status(GrpcStatus.INTERNAL))).toEqual([
      3,
      'attemptsExhausted',
    ]);
    expect(await attempts(r, 'inventory', status(GrpcStatus.NOT_FOUND))).toEqual([1, 'permanent']);
    expect(await attempts(r, 'inventory', status(GrpcStatus.INVALID_ARGUMENT))).toEqual([
      1,
      'permanent',
    ]);
    // Without a gRPC status, the Nest layer's rule still judges an HttpException: a 404 is an answer.
    expect(await attempts(r, 'inventory', new NotFoundException())).toEqual([1, 'permanent']);
    // The default classifier knows no gRPC status: an error carrying NOT_FOUND is just an error there.
    expect(await attempts(r, 'viaDefaults', status(GrpcStatus.NOT_FOUND))).toEqual([
      3,
      'attemptsExhausted',
    ]);
  });

  it('rules over base grpc name statuses and come first', async () => {
    const r = registry();
    expect(await attempts(r, 'pricing', status(GrpcStatus.FAILED_PRECONDITION))).toEqual([
      3,
      'attemptsExhausted',
    ]);
    expect(await attempts(r, 'pricing', status(GrpcStatus.UNAVAILABLE))).toEqual([1, 'permanent']);
    expect(await attempts(r, 'pricing', status(GrpcStatus.NOT_FOUND))).toEqual([1, 'permanent']);
    expect(await attempts(r, 'pricing', status(GrpcStatus.ABORTED))).toEqual([
      3,
      'attemptsExhausted',
    ]);
  });

  it('is accepted in defaults, and a bad base is refused naming the path and the three names', () => {
    const r = PolicyRegistry.create({ defaults: { classifier: 'grpc' }, policies: { a: {} } });
    expect(
      r.get('a').options.classifier.classifyError(status(GrpcStatus.UNAUTHENTICATED), {
        callerAborted: false,
      }).kind,
    ).toBe('Permanent');
    expect(() =>
      PolicyRegistry.create({ policies: { a: { classifier: { base: 'grpc-js' as never } } } }),
    ).toThrow(
      `policies.a.classifier.base: "grpc-js" is invalid: must be 'default', 'http' or 'grpc'`,
    );
  });
});
