import type { ExecutionContext } from '@nestjs/common';
import { of } from 'rxjs';
import { Ambient } from '../core/index.js';
import { ResilienceRpcContextInterceptor } from './resilience-rpc-context.interceptor.js';

/** A grpc-js-like metadata object holding `values` per key. */
function metadata(values: Record<string, unknown[]> = {}) {
  return { get: (key: string) => values[key] ?? [] };
}

const deadlineIn = (ms: number) => ({ getDeadline: () => new Date(Date.now() + ms) });

describe('ResilienceRpcContextInterceptor.changesFor', () => {
  it('reads the call deadline, our metadata, criticality (clamped) and the nested-retry marker', () => {
    const changes = ResilienceRpcContextInterceptor.changesFor(
      metadata({ 'x-nresilience-criticality': ['criticalPlus'], 'x-nresilience-retrying': ['1'] }),
      deadlineIn(500),
    );
    expect(changes).toMatchObject({ criticality: 'critical', nestedRetry: true });
    expect(changes!.remaining).toBeGreaterThan(400);
    expect(changes!.remaining).toBeLessThanOrEqual(500);
  });

  it('takes the tighter of grpc-timeout and x-nresilience-remaining-ms', () => {
    expect(
      ResilienceRpcContextInterceptor.changesFor(
        metadata({ 'x-nresilience-remaining-ms': ['120'] }),
        deadlineIn(5000),
      ),
    ).toEqual({ remaining: 120 });
  });

  it('a passed deadline counts as 0 ms left', () => {
    expect(ResilienceRpcContextInterceptor.changesFor(metadata(), deadlineIn(-50))).toEqual({
      remaining: 0,
    });
  });

  it('ignores malformed values and asks for nothing without a deadline', () => {
    const garbage = metadata({
      'x-nresilience-remaining-ms': ['-1', 'abc'],
      'x-nresilience-criticality': ['urgent'],
      'x-nresilience-retrying': ['yes'],
    });
    expect(
      ResilienceRpcContextInterceptor.changesFor(garbage, { getDeadline: () => Infinity }),
    ).toBeUndefined();
  });

  it('is undefined outside gRPC (no metadata object)', () => {
    expect(
      ResilienceRpcContextInterceptor.changesFor({ pattern: 'sum' }, undefined),
    ).toBeUndefined();
    expect(ResilienceRpcContextInterceptor.changesFor(undefined, undefined)).toBeUndefined();
  });
});

describe("ResilienceRpcContextInterceptor({ nested: 'singleShot' })", () => {
  /** Runs the interceptor on a gRPC call with `values` as metadata; what the handler saw of the ambient context. */
  function handled(
    interceptor: ResilienceRpcContextInterceptor,
    values: Record<string, unknown[]>,
  ) {
    const context = {
      getType: () => 'rpc',
      getArgByIndex: (i: number) => (i === 1 ? metadata(values) : undefined),
    } as unknown as ExecutionContext;
    let seen: { singleShot?: boolean; nestedRetry?: boolean } | undefined;
    interceptor.intercept(context, {
      handle: () => {
        seen = Ambient.current();
        return of(undefined);
      },
    });
    return [seen?.nestedRetry ?? false, seen?.singleShot ?? false];
  }

  it('runs a marked call single-shot, and an unmarked one as usual', () => {
    const single = new ResilienceRpcContextInterceptor({ nested: 'singleShot' });
    expect(handled(single, { 'x-nresilience-retrying': ['1'] })).toEqual([true, true]);
    expect(handled(single, { 'x-nresilience-remaining-ms': ['500'] })).toEqual([false, false]);
  });

  it("only records a marked call by default ('report')", () => {
    expect(
      handled(new ResilienceRpcContextInterceptor(), { 'x-nresilience-retrying': ['1'] }),
    ).toEqual([true, false]);
  });

  it('refuses another nested value, naming the field', () => {
    expect(() => new ResilienceRpcContextInterceptor({ nested: 'always' as never })).toThrow(
      "nested: \"always\" is invalid: must be 'report' or 'singleShot'",
    );
  });
});
