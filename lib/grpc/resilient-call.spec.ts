import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import { Backoff, Classifier, GrpcStatus, Resilience, RetryBudget } from '../core/index.js';
import { ResilientCall, stampMetadata } from './resilient-call.js';

/** A channel below the interceptor that answers each attempt with the next status of `codes`. */
function scriptedChannel(codes: number[]): { nextCall: NextCall; sent: Metadata[] } {
  const sent: Metadata[] = [];
  const nextCall = (() => ({
    start(metadata: Metadata, listener: Partial<InterceptingListener>) {
      sent.push(metadata);
      const code = codes[sent.length - 1] ?? GrpcStatus.OK;
      queueMicrotask(() => {
        if (code === GrpcStatus.OK) listener.onReceiveMessage?.({ text: 'ok' });
        listener.onReceiveStatus?.({
          code,
          details: code === GrpcStatus.OK ? '' : 'down',
          metadata: new Metadata(),
        } as StatusObject);
      });
    },
    sendMessage() {},
    sendMessageWithContext(_context: unknown, _message: unknown) {},
    halfClose() {},
    startRead() {},
    cancelWithStatus() {},
    getPeer: () => 'loopback',
    getAuthContext: () => null,
  })) as unknown as NextCall;
  return { nextCall, sent };
}

/** Runs one unary call whose caller's metadata carries `callerMetadata`; resolves with the final status. */
function run(
  repeatable: boolean,
  codes: number[],
  callerMetadata: Metadata,
): Promise<{ status: StatusObject; sent: Metadata[] }> {
  const policy = Resilience.default.with({
    attempts: 3,
    backoff: Backoff.none,
    budget: RetryBudget.none,
    classifier: Classifier.grpc,
  });
  const { nextCall, sent } = scriptedChannel(codes);
  const call = new ResilientCall(
    { policy, repeatable, streaming: false, inboundRemaining: Infinity, criticality: undefined },
    {} as InterceptorOptions,
    nextCall,
  );
  return new Promise((resolve) => {
    call.start(callerMetadata, { onReceiveStatus: (status) => resolve({ status, sent }) });
    call.sendMessage({ text: 'hello' });
    call.halfClose();
  });
}

function staleMarker(): Metadata {
  const metadata = new Metadata();
  metadata.set('x-nresilience-retrying', '1');
  metadata.set('x-request-id', 'r-7');
  return metadata;
}

describe('gRPC attempts are stamped by the one outbound rule', () => {
  it("removes a caller's stale retrying marker from a call that will not retry", async () => {
    const { status, sent } = await run(false, [GrpcStatus.OK], staleMarker());
    expect(status.code).toBe(GrpcStatus.OK);
    expect(sent.map((metadata) => metadata.get('x-nresilience-retrying'))).toEqual([[]]);
    expect(sent[0]!.get('x-request-id')).toEqual(['r-7']);
  });

  it("marks only the first attempt of a retrying call, even when the caller's metadata carries a marker", async () => {
    const { status, sent } = await run(
      true,
      [GrpcStatus.UNAVAILABLE, GrpcStatus.UNAVAILABLE, GrpcStatus.OK],
      staleMarker(),
    );
    expect(status.code).toBe(GrpcStatus.OK);
    expect(sent.map((metadata) => metadata.get('x-nresilience-retrying'))).toEqual([['1'], [], []]);
  });

  it('sends the remaining time in whole ms, the lower of the bound and the outer time, clamped at 0', () => {
    const stamped = (bound: number, outer: number): unknown[] => {
      const metadata = new Metadata();
      stampMetadata(metadata, {
        retrying: false,
        attempt: 2,
        bound,
        outer,
        criticality: undefined,
      });
      return metadata.get('x-nresilience-remaining-ms');
    };
    expect(stamped(1234.9, 99.5)).toEqual(['99']);
    expect(stamped(250.7, Infinity)).toEqual(['250']);
    expect(stamped(-3.7, Infinity)).toEqual(['0']);
    expect(stamped(Infinity, -12)).toEqual(['0']);
    expect(stamped(Infinity, Infinity)).toEqual([]);
  });

  it('sends the criticality on every attempt when given', () => {
    const metadata = new Metadata();
    stampMetadata(metadata, {
      retrying: true,
      attempt: 2,
      bound: Infinity,
      outer: Infinity,
      criticality: 'sheddable',
    });
    expect(metadata.get('x-nresilience-criticality')).toEqual(['sheddable']);
    expect(metadata.get('x-nresilience-retrying')).toEqual([]);
  });
});
