import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import {
  Backoff,
  type ClassifyContext,
  type PolicyOptions,
  PolicyConfigError,
  Resilience,
} from '../lib/core/index.js';
import {
  Classifier,
  createResilienceInterceptor,
  GrpcStatusError,
  type ResilienceInterceptorOptions,
  type ResumeFrom,
} from '../lib/grpc/index.js';
import { CallFacts } from '../lib/http/index.js';
import { LoopbackGrpc, interceptedClient } from './support/grpc-loopback.js';
import { until } from './support/wire-wait.js';

const TAIL = 'nresilience.test.Feed/Tail';

interface TailRequest {
  from: number;
  to: number;
}
interface TailItem {
  seq: number;
}

/** Re-opens the feed after the last item received. */
const resumeTail: ResumeFrom<TailRequest, TailItem> = (request, last) => ({
  ...request,
  from: last.seq + 1,
});

let server: LoopbackGrpc;

beforeAll(async () => {
  server = await LoopbackGrpc.start();
});
afterAll(() => server.close());
afterEach(() => server.reset());

/**
 * A Feed client through the interceptor with `resumeFrom` for Tail, under a FakeClock policy with
 * exponential backoff (100 ms base): `drive` moves the fake clock to each pending timer while the
 * real socket does its part, so restarts' backoff is observed without sleeping.
 */
function setup(
  options: Partial<ResilienceInterceptorOptions> = { resumeFrom: { [TAIL]: resumeTail } },
  changes: PolicyOptions = {},
) {
  return interceptedClient(server, 'Feed', options, changes);
}

/** Reads Tail(from, to) to its end, or cancels it after `cancelAfter` items; `seqs` fills as items arrive. */
function tail(
  client: Record<string, (...args: unknown[]) => unknown>,
  request: TailRequest,
  cancelAfter?: number,
  seqs: number[] = [],
): Promise<{ seqs: number[]; error: grpc.ServiceError | undefined; headers: number }> {
  let headers = 0;
  return new Promise((resolve) => {
    const call = client.Tail!(request) as grpc.ClientReadableStream<TailItem>;
    call.on('metadata', () => headers++);
    call.on('data', (item: TailItem) => {
      seqs.push(item.seq);
      if (seqs.length === cancelAfter) call.cancel();
    });
    call.on('error', (error: grpc.ServiceError) => resolve({ seqs, error, headers }));
    call.on('end', () => resolve({ seqs, error: undefined, headers }));
  });
}

const froms = () => server.calls('Tail').map((call) => (call.request as TailRequest).from);
const range = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, index) => from + index);

describe('server streams with a checkpoint (resumeFrom) through the interceptor', () => {
  it('UNAVAILABLE after 3 of 8 items re-opens the stream from item 3: 0..7 once each, in order, one streamResumed', async () => {
    const { client, drive, recorder } = setup();
    server.script('Tail', { messages: 3, code: grpc.status.UNAVAILABLE }, {});
    const result = await drive(tail(client, { from: 0, to: 8 }));
    expect(result.error).toBeUndefined();
    expect(result.seqs).toEqual(range(0, 8));
    expect(froms()).toEqual([0, 3]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(1);
    // The restart waited the first retry's backoff, and the client saw the headers once.
    expect(recorder.ofKind('retrying').map((event) => event.delay)).toEqual([100]);
    expect(result.headers).toBe(1);
    // Only the call's first attempt carries the nested-retry marker.
    expect(server.calls('Tail').map((call) => call.metadata.get('x-nresilience-retrying'))).toEqual(
      [['1'], []],
    );
  });

  it('every classification of the call, each segment and the restart decision, sees the call’s one CallFacts (repeatable)', async () => {
    const seen: { outcome: string; context: ClassifyContext }[] = [];
    const classifier = Classifier.grpc.with((outcome, context) => {
      const error = outcome.error;
      seen.push({
        outcome: outcome.ok
          ? 'stream'
          : error instanceof GrpcStatusError
            ? grpc.status[error.code]!
            : String(error),
        context,
      });
      return undefined;
    });
    const { client, drive, recorder } = setup({ resumeFrom: { [TAIL]: resumeTail }, classifier });
    server.script(
      'Tail',
      { messages: 0, code: grpc.status.UNAVAILABLE },
      { messages: 3, code: grpc.status.UNAVAILABLE },
      {},
    );
    const result = await drive(tail(client, { from: 0, to: 6 }));
    expect(result.error).toBeUndefined();
    expect(result.seqs).toEqual(range(0, 6));
    expect(froms()).toEqual([0, 0, 3]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(1);
    expect(seen.map((entry) => entry.outcome)).toEqual([
      'UNAVAILABLE', // the first segment's first attempt
      'stream', // its second attempt: the first message
      'UNAVAILABLE', // after 3 messages: may the stream re-open?
      'stream', // the restart's first message
    ]);
    const facts = seen[0]!.context.facts;
    expect(facts).toBeInstanceOf(CallFacts);
    expect((facts as CallFacts).repeatable).toBe(true);
    expect(seen.map((entry) => entry.context)).toEqual(
      Array.from({ length: 4 }, () => ({ callerAborted: false, facts })),
    );
    expect(seen.every((entry) => entry.context.facts === facts)).toBe(true);
  });

  it('without a checkpoint the stream keeps the default: the failure after the first item reaches the client', async () => {
    const { client, drive, recorder } = setup({ repeatable: ['nresilience.test.Feed'] });
    server.script('Tail', { messages: 3, code: grpc.status.UNAVAILABLE }, {});
    const result = await drive(tail(client, { from: 0, to: 8 }));
    expect(result.seqs).toEqual([0, 1, 2]);
    expect(result.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(froms()).toEqual([0]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(0);
  });

  it('a Permanent failure mid-stream is not restarted: it reaches the client after the items before it', async () => {
    const { client, drive, recorder } = setup();
    server.script('Tail', { messages: 2, code: grpc.status.FAILED_PRECONDITION }, {});
    const result = await drive(tail(client, { from: 0, to: 8 }));
    expect(result.seqs).toEqual([0, 1]);
    expect(result.error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(froms()).toEqual([0]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(0);
  });

  it('with its restarts used up (restarts: 2), the next failure reaches the client', async () => {
    const { client, drive, recorder } = setup(undefined, { restarts: 2 });
    const broken = { messages: 1, code: grpc.status.UNAVAILABLE };
    server.script('Tail', broken, broken, broken, {});
    const result = await drive(tail(client, { from: 0, to: 8 }));
    expect(result.seqs).toEqual([0, 1, 2]);
    expect(result.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(froms()).toEqual([0, 1, 2]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(2);
  });

  it('a restart that fails before its first item is retried like an attempt, from the same checkpoint', async () => {
    const { client, drive, recorder } = setup();
    server.script(
      'Tail',
      { messages: 4, code: grpc.status.UNAVAILABLE },
      { messages: 0, code: grpc.status.UNAVAILABLE },
      {},
    );
    const result = await drive(tail(client, { from: 0, to: 6 }));
    expect(result.error).toBeUndefined();
    expect(result.seqs).toEqual(range(0, 6));
    expect(froms()).toEqual([0, 4, 4]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(1);
    expect(recorder.ofKind('retrying').map((event) => event.delay)).toEqual([100, 200]);
  });

  it('a stream silent for longer than attemptTimeout while the client waits is cancelled and re-opened from its checkpoint', async () => {
    const { clock, client, recorder } = setup(undefined, {
      attemptTimeout: 1000,
      backoff: Backoff.none,
    });
    server.script('Tail', { messages: 2, hold: true }, {});
    const seen: number[] = [];
    const reading = tail(client, { from: 0, to: 5 }, undefined, seen);
    // Once both items are in, the client waits for a third: the gap timer is the one pending.
    await until(() => seen.length === 2);
    await clock.advance(999);
    expect(server.calls('Tail')).toHaveLength(1);
    await clock.advance(1);
    const result = await reading;
    expect(result.error).toBeUndefined();
    expect(result.seqs).toEqual(range(0, 5));
    expect(froms()).toEqual([0, 2]);
    expect(server.calls('Tail')[0]!.cancelled).toBe(true);
    expect(recorder.ofKind('streamResumed')).toHaveLength(1);
  });

  it('the client cancelling stops the stream on the wire, with no restart', async () => {
    const { client, drive, recorder } = setup();
    server.script('Tail', { messages: 3, hold: true });
    const result = await drive(tail(client, { from: 0, to: 8 }, 2));
    expect(result.error?.code).toBe(grpc.status.CANCELLED);
    expect(result.seqs.slice(0, 2)).toEqual([0, 1]);
    await until(() => server.calls('Tail')[0]!.cancelled);
    expect(froms()).toEqual([0]);
    expect(recorder.ofKind('streamResumed')).toHaveLength(0);
  });

  it('an async resumeFrom ends the stream at its first message with an error naming it, before any restart could send a promise', async () => {
    const asyncResume = async (request: TailRequest, last: TailItem) => ({
      ...request,
      from: last.seq + 1,
    });
    const { client, drive } = setup({ resumeFrom: { [TAIL]: asyncResume as never } });
    const result = await drive(tail(client, { from: 0, to: 8 }));
    expect(result.seqs).toEqual([]);
    expect(result.error?.details).toContain(
      'resumeFrom: "a promise" is invalid: must return the request itself, synchronously',
    );
    expect(froms()).toEqual([0]);
  });

  it('rejects a resumeFrom that is not an object of functions keyed by method', () => {
    const policy = Resilience.default;
    expect(() =>
      createResilienceInterceptor({ policy, resumeFrom: { [TAIL]: 3 as never } }),
    ).toThrow(PolicyConfigError);
    expect(() =>
      createResilienceInterceptor({ policy, resumeFrom: { 'nresilience.test.Feed': resumeTail } }),
    ).toThrow(/resumeFrom.*'package\.Service\/Method'/s);
  });
});
