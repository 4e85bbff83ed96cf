import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import {
  Backoff,
  Classifier,
  GrpcStatus,
  Resilience,
  RetryBudget,
  Verdict,
} from '../core/index.js';
import { type AttemptStamp, stampAttempt } from '../outbound/stamp.js';
import { ResilientCall } from './resilient-call.js';
import { metadataSetter } from './wire-call.js';

/** Stamps `metadata` as an attempt of the gRPC client does. */
function stampMetadata(metadata: Metadata, stamp: AttemptStamp): void {
  stampAttempt(metadataSetter(metadata), stamp);
}

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

/**
 * A channel below the interceptor whose every attempt is a server stream: headers and one message
 * (`{ attempt }`) at once, then silence until cancelled or ended by the test; cancels are recorded
 * and answered with their status, as grpc-js does.
 */
function streamingChannel(): {
  nextCall: NextCall;
  cancels: { attempt: number; code: number }[];
  end: (attempt: number) => void;
} {
  const cancels: { attempt: number; code: number }[] = [];
  const listeners: Partial<InterceptingListener>[] = [];
  const status = (code: number): StatusObject =>
    ({ code, details: '', metadata: new Metadata() }) as StatusObject;
  const nextCall = (() => {
    const attempt = listeners.length + 1;
    let ended = false;
    return {
      start(_metadata: Metadata, listener: Partial<InterceptingListener>) {
        listeners.push(listener);
        queueMicrotask(() => {
          listener.onReceiveMetadata?.(new Metadata());
          listener.onReceiveMessage?.({ attempt });
        });
      },
      sendMessage() {},
      halfClose() {},
      startRead() {},
      cancelWithStatus(code: number) {
        if (ended) return;
        ended = true;
        cancels.push({ attempt, code });
        listeners[attempt - 1]!.onReceiveStatus?.(status(code));
      },
      getPeer: () => 'loopback',
      getAuthContext: () => null,
    };
  }) as unknown as NextCall;
  const end = (attempt: number): void =>
    listeners[attempt - 1]!.onReceiveStatus?.(status(GrpcStatus.OK));
  return { nextCall, cancels, end };
}

describe('gRPC stream answers the client does not get', () => {
  it("cancels an earlier attempt's stream the classifier rejected before the next attempt goes out", async () => {
    let judged = 0;
    // The first stream's first message is judged a failure worth retrying; the second is accepted.
    const classifier = Classifier.grpc.with((outcome) =>
      outcome.ok && ++judged === 1 ? Verdict.transient : undefined,
    );
    const policy = Resilience.default.with({
      attempts: 3,
      backoff: Backoff.none,
      budget: RetryBudget.none,
      classifier,
    });
    const { nextCall, cancels, end } = streamingChannel();
    const call = new ResilientCall(
      {
        policy,
        repeatable: true,
        streaming: true,
        inboundRemaining: Infinity,
        criticality: undefined,
      },
      { method_definition: { path: '/shop.Feed/Tail' } } as InterceptorOptions,
      nextCall,
    );
    const received: unknown[] = [];
    const status = await new Promise<StatusObject>((resolve) => {
      call.start(new Metadata(), {
        onReceiveMessage: (message) => {
          received.push(message);
          end(2);
        },
        onReceiveStatus: resolve,
      });
      call.sendMessage({ from: 0 });
      call.halfClose();
      call.startRead();
    });
    expect(status.code).toBe(GrpcStatus.OK);
    expect(received).toEqual([{ attempt: 2 }]);
    // Attempt 1's call is cancelled (it would stream on to nobody), attempt 2's is the client's.
    expect(cancels).toEqual([{ attempt: 1, code: GrpcStatus.CANCELLED }]);
  });
});
