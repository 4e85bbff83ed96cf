import { HttpException, NotFoundException } from '@nestjs/common';
import { Classifier, GrpcStatus, PolicyConfigError, Verdict } from '../core/index.js';
import { classifierFromSpec, parseClassifier } from './classifier-config.js';
import { parseResilienceConfig } from './policy-config.js';
import { ResilienceConfigError } from './resilience-config.error.js';

const context = { callerAborted: false };
const spec = (value: unknown) => {
  const read = parseClassifier(value, 'policies.p.classifier');
  if (!('spec' in read)) throw new Error(read.problems.map((p) => p.message).join('; '));
  return read.spec;
};
const problems = (value: unknown) => {
  const read = parseClassifier(value, 'policies.p.classifier');
  return 'problems' in read ? read.problems.map((p) => p.message) : [];
};

describe('classifier in config', () => {
  it("'default', 'http' and 'grpc' name the built-in classifiers", () => {
    expect(classifierFromSpec(spec('default'))).toBe(Classifier.default);
    expect(classifierFromSpec(spec('http'))).toBe(Classifier.http);
    expect(classifierFromSpec(spec('grpc'))).toBe(Classifier.grpc);
  });

  it("'grpc' judges gRPC statuses; rules over base 'grpc' come first; the framework's rules stay under it", () => {
    const status = (code: number, details = '') =>
      Object.assign(new Error(details), { code, details });
    const grpc = classifierFromSpec(
      spec({
        base: 'grpc',
        transient: ['StaleRead', 'FAILED_PRECONDITION'],
        permanent: ['UNAVAILABLE'],
      }),
    );
    expect(grpc.classifyError(status(GrpcStatus.NOT_FOUND), context)).toBe(Verdict.permanent);
    expect(grpc.classifyError(status(GrpcStatus.INTERNAL), context)).toBe(Verdict.transient);
    expect(grpc.classifyError(status(GrpcStatus.RESOURCE_EXHAUSTED), context).kind).toBe(
      'Throttled',
    );
    // An entry naming a gRPC status matches the status an error carries, before the base judges it.
    expect(grpc.classifyError(status(GrpcStatus.UNAVAILABLE), context)).toBe(Verdict.permanent);
    expect(grpc.classifyError(status(GrpcStatus.FAILED_PRECONDITION), context)).toBe(
      Verdict.transient,
    );
    expect(grpc.classifyError(Object.assign(new Error('x'), { name: 'StaleRead' }), context)).toBe(
      Verdict.transient,
    );
    expect(grpc.valuesAreOk).toBe(true);
    const nestLike = classifierFromSpec(spec('grpc'), [
      (o) => (!o.ok && o.error instanceof HttpException ? Verdict.permanent : undefined),
    ]);
    expect(nestLike).not.toBe(Classifier.grpc);
    expect(nestLike.classifyError(new HttpException('x', 500), context)).toBe(Verdict.permanent);
    expect(nestLike.classifyError(status(GrpcStatus.UNAVAILABLE), context)).toBe(Verdict.transient);
    expect(nestLike.classifyError(status(GrpcStatus.INVALID_ARGUMENT), context)).toBe(
      Verdict.permanent,
    );
  });

  it('rules match an error by name, code or carried HTTP status, before the base', () => {
    const classifier = classifierFromSpec(
      spec({
        permanent: ['ValidationError', 404],
        transient: ['ECONNRESET', 'RangeError'],
        throttled: [429],
      }),
    );
    const named = (name: string) => Object.assign(new Error('x'), { name });
    expect(classifier.classifyError(named('ValidationError'), context)).toBe(Verdict.permanent);
    expect(
      classifier.classifyError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), context),
    ).toBe(Verdict.transient);
    expect(classifier.classifyError(new RangeError('out'), context)).toBe(Verdict.transient); // Permanent by default; the rule wins
    expect(classifier.classifyError(new NotFoundException(), context)).toBe(Verdict.permanent);
    expect(classifier.classifyError(new HttpException('slow down', 429), context).kind).toBe(
      'Throttled',
    );
    expect(classifier.classifyError(new Error('other'), context)).toBe(Verdict.transient); // the default rules decide the rest
    expect(classifier.valuesAreOk).toBe(true); // errors only: the success path stays fast
  });

  it("base 'http' keeps Classifier.http under the rules; the framework's default rules go under base 'default'", () => {
    const http = classifierFromSpec(spec({ base: 'http', transient: [404] }));
    expect(http.classifyError(new NotFoundException(), context)).toBe(Verdict.transient);
    expect(http.classifyValue(new Response(null, { status: 502 }), context)).toBe(
      Verdict.transient,
    );
    const nestLike = classifierFromSpec(spec({ permanent: ['ValidationError'] }), [
      (o) => (!o.ok && o.error instanceof HttpException ? Verdict.permanent : undefined),
    ]);
    expect(nestLike.classifyError(new HttpException('x', 500), context)).toBe(Verdict.permanent);
  });

  it('rejects bad rules naming the path, the value and the rule', () => {
    expect(problems('smart')).toEqual([
      `policies.p.classifier: "smart" is invalid: must be 'default', 'http' or 'grpc' or an object { base?, permanent?, transient?, throttled? } of error names, codes and HTTP statuses`,
    ]);
    expect(
      problems({
        permanent: ['ValidationError', 99, ''],
        transient: 'ECONNRESET',
        base: 'thrift',
        retry: [],
      }),
    ).toEqual([
      'policies.p.classifier.retry: [] is invalid: is not a known classifier key (base, permanent, transient, throttled)',
      `policies.p.classifier.base: "thrift" is invalid: must be 'default', 'http' or 'grpc'`,
      'policies.p.classifier.permanent[1]: 99 is invalid: must be an error name or code (a non-empty string) or an HTTP status (an integer in [100, 599])',
      'policies.p.classifier.permanent[2]: "" is invalid: must be an error name or code (a non-empty string) or an HTTP status (an integer in [100, 599])',
      'policies.p.classifier.transient: "ECONNRESET" is invalid: must be a list of error names, codes or HTTP statuses, e.g. ["ValidationError", 404]',
    ]);
    expect(problems({ permanent: [404], transient: [404] })).toEqual([
      'policies.p.classifier.transient[0]: 404 is invalid: is already listed at policies.p.classifier.permanent[0]: an error can have one verdict',
    ]);
  });

  it('a gRPC status given by its number is refused with its name, the way a list names it', () => {
    expect(problems({ base: 'grpc', transient: [14, 0], permanent: [16] })).toEqual([
      'policies.p.classifier.permanent[0]: 16 is invalid: must be an error name or code (a non-empty string) or an HTTP status (an integer in [100, 599]); a gRPC status goes by its name: "UNAUTHENTICATED" for 16',
      'policies.p.classifier.transient[0]: 14 is invalid: must be an error name or code (a non-empty string) or an HTTP status (an integer in [100, 599]); a gRPC status goes by its name: "UNAVAILABLE" for 14',
      'policies.p.classifier.transient[1]: 0 is invalid: must be an error name or code (a non-empty string) or an HTTP status (an integer in [100, 599]); a gRPC status goes by its name: "OK" for 0',
    ]);
  });

  it('is read per policy and from defaults (a policy’s own replaces it); bad rules fail the whole config', () => {
    const parsed = parseResilienceConfig({
      defaults: { classifier: 'http' },
      policies: { a: {}, b: { classifier: { permanent: [409] } }, c: { classifier: 'grpc' } },
    });
    expect(parsed.policies.get('a')!.classifier).toEqual({
      base: 'http',
      permanent: [],
      transient: [],
      throttled: [],
    });
    expect(parsed.policies.get('b')!.classifier).toEqual({
      base: 'default',
      permanent: [409],
      transient: [],
      throttled: [],
    });
    expect(parsed.policies.get('c')!.classifier).toEqual({
      base: 'grpc',
      permanent: [],
      transient: [],
      throttled: [],
    });
    expect(
      parseResilienceConfig({ defaults: { classifier: 'grpc' }, policies: { d: {} } }).policies.get(
        'd',
      )!.classifier,
    ).toEqual({ base: 'grpc', permanent: [], transient: [], throttled: [] });
    let caught: unknown;
    try {
      parseResilienceConfig({ policies: { a: { classifier: { permanent: [true] } } } });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ResilienceConfigError);
    expect(
      (caught as ResilienceConfigError).problems.map((p: PolicyConfigError) => [p.field, p.value]),
    ).toEqual([['policies.a.classifier.permanent[0]', true]]);
  });
});
