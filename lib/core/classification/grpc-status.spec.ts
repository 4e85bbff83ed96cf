import { Classifier } from './classifier.js';
import { GrpcStatus, grpcStatusOf, readPushback } from './grpc-status.js';

/** A minimal metadata object: `get` returns the values of a key, as grpc-js `Metadata` does. */
function metadata(values: Record<string, unknown[]> = {}) {
  return { get: (key: string) => values[key] ?? [] };
}

function failure(code: number, details = '', trailers = metadata()) {
  return Object.assign(new Error(`${code}: ${details}`), { code, details, metadata: trailers });
}

const classify = (error: unknown, callerAborted = false) =>
  Classifier.grpc.classifyError(error, { callerAborted });

describe('Classifier.grpc', () => {
  it.each(['UNAVAILABLE', 'INTERNAL', 'UNKNOWN', 'ABORTED', 'DEADLINE_EXCEEDED'] as const)(
    '%s is Transient',
    (name) => {
      expect(classify(failure(GrpcStatus[name]))).toEqual({ kind: 'Transient' });
    },
  );

  it.each([
    'INVALID_ARGUMENT',
    'NOT_FOUND',
    'ALREADY_EXISTS',
    'PERMISSION_DENIED',
    'UNAUTHENTICATED',
    'FAILED_PRECONDITION',
    'OUT_OF_RANGE',
    'UNIMPLEMENTED',
    'CANCELLED',
    'DATA_LOSS',
  ] as const)('%s is an answer (Permanent)', (name) => {
    expect(classify(failure(GrpcStatus[name]))).toEqual({ kind: 'Permanent' });
  });

  it('RESOURCE_EXHAUSTED is Throttled, with the pushback when sent', () => {
    expect(classify(failure(GrpcStatus.RESOURCE_EXHAUSTED))).toEqual({ kind: 'Throttled' });
    expect(
      classify(
        failure(
          GrpcStatus.RESOURCE_EXHAUSTED,
          '',
          metadata({ 'grpc-retry-pushback-ms': ['1500'] }),
        ),
      ),
    ).toEqual({ kind: 'Throttled', retryAfter: 1500 });
  });

  it('a valid pushback on a transient status times the retry; an invalid one stops retries', () => {
    expect(
      classify(failure(GrpcStatus.UNAVAILABLE, '', metadata({ 'grpc-retry-pushback-ms': ['0'] }))),
    ).toEqual({ kind: 'Throttled', retryAfter: 0 });
    expect(
      classify(failure(GrpcStatus.UNAVAILABLE, '', metadata({ 'grpc-retry-pushback-ms': ['-5'] }))),
    ).toEqual({ kind: 'Permanent' });
    expect(
      classify(
        failure(
          GrpcStatus.RESOURCE_EXHAUSTED,
          '',
          metadata({ 'grpc-retry-pushback-ms': ['soon'] }),
        ),
      ),
    ).toEqual({ kind: 'Permanent' });
  });

  it("grpc-js's own message-size and serialization failures are Permanent", () => {
    expect(
      classify(
        failure(GrpcStatus.RESOURCE_EXHAUSTED, 'Received message larger than max (5000 vs. 4096)'),
      ),
    ).toEqual({ kind: 'Permanent' });
    expect(
      classify(failure(GrpcStatus.INTERNAL, 'Request message serialization failure: bad field')),
    ).toEqual({ kind: 'Permanent' });
  });

  it("a caller's cancellation is Permanent whatever the status", () => {
    expect(classify(failure(GrpcStatus.UNAVAILABLE), true)).toEqual({ kind: 'Permanent' });
  });

  it('errors without a gRPC status fall to the default rules', () => {
    expect(classify(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toEqual({
      kind: 'Transient',
    });
    expect(classify(new TypeError('bug'))).toEqual({ kind: 'Permanent' });
    expect(classify(failure(42))).toEqual({ kind: 'Transient' });
  });
});

describe('grpcStatusOf', () => {
  it('reads ServiceError-shaped errors, status objects and RpcException-like getError()', () => {
    expect(grpcStatusOf(failure(5, 'gone'))).toMatchObject({ code: 5, details: 'gone' });
    expect(grpcStatusOf({ code: 14, details: 'down', metadata: metadata() })).toMatchObject({
      code: 14,
      details: 'down',
    });
    expect(grpcStatusOf({ getError: () => ({ code: 3, message: 'bad' }) })).toEqual({
      code: 3,
      details: 'bad',
      metadata: undefined,
    });
  });

  it.each([[null], ['UNAVAILABLE'], [{ code: 17 }], [{ code: 1.5 }], [{ code: '14' }]])(
    'is undefined for %j',
    (value) => {
      expect(grpcStatusOf(value)).toBeUndefined();
    },
  );
});

describe('readPushback', () => {
  it.each([
    [['250'], 250],
    [[Buffer.from('40')], 40],
    [[' 7 '], 7],
    [['12', '99'], 12],
    [['-1'], 'stop'],
    [['1.5'], 'stop'],
    [['abc'], 'stop'],
    [[''], 'stop'],
    [['99999999999999999999'], 'stop'],
    [[42], 'stop'],
    [[], undefined],
  ])('%j → %j', (values, expected) => {
    expect(readPushback(metadata({ 'grpc-retry-pushback-ms': values }))).toBe(expected);
  });

  it('is undefined without metadata, and never throws on a broken one', () => {
    expect(readPushback(undefined)).toBeUndefined();
    expect(
      readPushback({
        get: () => {
          throw new Error('broken');
        },
      }),
    ).toBeUndefined();
  });
});
