import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  Backoff,
  FakeClock,
  Jitter,
  type PolicyOptions,
  Resilience,
} from '../../lib/core/index.js';
import {
  type ResilienceInterceptorOptions,
  createResilienceInterceptor,
} from '../../lib/grpc/index.js';
import { EventRecorder } from '../../lib/testing/index.js';

/** The test proto: package `nresilience.test`, services Echo (Say, Watch, Collect), Ledger (Post) and Feed (Tail). */
export const ECHO_PROTO = join(process.cwd(), 'test/fixtures/grpc/echo.proto');

/** One scripted answer of the loopback server. Omitted fields: answer OK at once. */
export interface Step {
  /** Final status code (default OK). */
  code?: number;
  /** Status message. */
  details?: string;
  /** Raw `grpc-retry-pushback-ms` trailer value to send with the status. */
  pushback?: string;
  /** Raw `x-nresilience-refusal` trailer value (a refusal reason) to send with the status. */
  refusal?: string;
  /** Real ms to wait before answering (keep it short). */
  delay?: number;
  /** Send response headers (`x-call: n`) before the status, even when failing. */
  headers?: boolean;
  /** Streaming: messages to send before the final status (Tail: default every item from `from` to `to`). */
  messages?: number;
  /** Streaming: after the messages, keep the stream open until the client cancels it. */
  hold?: boolean;
}

/** What the server saw of one call. */
export interface Received {
  /** 1-based index of the call among all calls of its method. */
  readonly n: number;
  readonly method: string;
  readonly metadata: grpc.Metadata;
  /** The request message (unary and server-streaming calls). */
  readonly request: unknown;
  /** Ms left on the call's deadline when the handler started (`Infinity` without one). */
  readonly remaining: number;
  /** Whether the client cancelled the call (read it after the call settled). */
  cancelled: boolean;
}

type Handler = (
  call:
    | grpc.ServerUnaryCall<unknown, unknown>
    | grpc.ServerWritableStream<unknown, unknown>
    | grpc.ServerReadableStream<unknown, unknown>,
  step: Step,
  received: Received,
) => void;

function loadPackage(): grpc.GrpcObject {
  const definition = protoLoader.loadSync(ECHO_PROTO, { keepCase: true, defaults: true });
  return (grpc.loadPackageDefinition(definition).nresilience as grpc.GrpcObject)
    .test as grpc.GrpcObject;
}

/** Real ms to wait (test-side only; the library never sets raw timers). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function trailersOf(step: Step): grpc.Metadata {
  const trailers = new grpc.Metadata();
  if (step.pushback !== undefined) trailers.set('grpc-retry-pushback-ms', step.pushback);
  if (step.refusal !== undefined) trailers.set('x-nresilience-refusal', step.refusal);
  return trailers;
}

function headersOf(n: number): grpc.Metadata {
  const headers = new grpc.Metadata();
  headers.set('x-call', String(n));
  return headers;
}

/**
 * A real gRPC server on 127.0.0.1 answering from per-method scripts: statuses, pushback trailers,
 * delays, headers before a failure, streams failing after some messages. Every call is recorded.
 */
export class LoopbackGrpc {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Step[]>();
  private readonly counts = new Map<string, number>();
  private readonly clients: grpc.Client[] = [];

  private constructor(
    private readonly server: grpc.Server,
    /** `127.0.0.1:<port>`. */
    readonly address: string,
    private readonly pkg: grpc.GrpcObject,
  ) {}

  /** Starts a server on an ephemeral port. */
  static async start(): Promise<LoopbackGrpc> {
    const pkg = loadPackage();
    const server = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    const loopback = new LoopbackGrpc(server, `127.0.0.1:${port}`, pkg);
    const service = (name: string) => (pkg[name] as grpc.ServiceClientConstructor).service;
    server.addService(service('Echo'), {
      Say: loopback.handle('Say', (call, step, received) =>
        loopback.answerUnary(call as grpc.ServerUnaryCall<unknown, unknown>, step, received),
      ),
      Watch: loopback.handle('Watch', (call, step, received) =>
        loopback.answerStream(call as grpc.ServerWritableStream<unknown, unknown>, step, received),
      ),
      Collect: loopback.handle('Collect', (call, step, received) =>
        loopback.answerCollect(call as grpc.ServerReadableStream<unknown, unknown>, step, received),
      ),
    });
    server.addService(service('Feed'), {
      Tail: loopback.handle('Tail', (call, step, received) =>
        loopback.answerTail(call as grpc.ServerWritableStream<unknown, unknown>, step, received),
      ),
    });
    server.addService(service('Ledger'), {
      Post: loopback.handle('Post', (call, step, received) =>
        loopback.answerUnary(call as grpc.ServerUnaryCall<unknown, unknown>, step, received),
      ),
    });
    return loopback;
  }

  /** Queues answers for the next calls of `method` (Say, Watch, Collect, Post, Tail). */
  script(method: string, ...steps: Step[]): this {
    const queue = this.scripts.get(method) ?? [];
    queue.push(...steps);
    this.scripts.set(method, queue);
    return this;
  }

  /** Calls seen for `method`. */
  calls(method: string): Received[] {
    return this.received.filter((call) => call.method === method);
  }

  /** A client of `service` (Echo, Ledger or Feed) with `options` (interceptors…); `reset` and `close` close it. */
  client(
    service: 'Echo' | 'Ledger' | 'Feed',
    options: grpc.ClientOptions = {},
  ): grpc.Client & Record<string, (...args: unknown[]) => unknown> {
    const Client = this.pkg[service] as grpc.ServiceClientConstructor;
    const client = new Client(this.address, grpc.credentials.createInsecure(), options);
    this.clients.push(client);
    return client as grpc.Client & Record<string, (...args: unknown[]) => unknown>;
  }

  /** Closes the clients it made and forgets what it recorded (between tests). */
  reset(): void {
    for (const client of this.clients.splice(0)) client.close();
    this.forget();
  }

  /** Forgets every recorded call, count and unused script step; its clients stay open. */
  forget(): void {
    this.received.length = 0;
    this.counts.clear();
    this.scripts.clear();
  }

  /** Closes the clients it made and stops the server at once. */
  close(): void {
    for (const client of this.clients.splice(0)) client.close();
    this.server.forceShutdown();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private handle(method: string, answer: Handler): (...args: any[]) => void {
    return (call: Parameters<Handler>[0], callback?: grpc.sendUnaryData<unknown>) => {
      const n = (this.counts.get(method) ?? 0) + 1;
      this.counts.set(method, n);
      const step = this.scripts.get(method)?.shift() ?? {};
      const deadline = call.getDeadline();
      const at = deadline instanceof Date ? deadline.getTime() : deadline;
      const received: Received = {
        n,
        method,
        metadata: call.metadata,
        request: (call as { request?: unknown }).request,
        remaining: at === Infinity ? Infinity : at - Date.now(),
        cancelled: false,
      };
      (call as unknown as NodeJS.EventEmitter).on('cancelled', () => (received.cancelled = true));
      this.received.push(received);
      (call as unknown as { callback?: grpc.sendUnaryData<unknown> }).callback = callback;
      answer(call, step, received);
    };
  }

  private async answerUnary(
    call: grpc.ServerUnaryCall<unknown, unknown>,
    step: Step,
    received: Received,
  ): Promise<void> {
    const callback = (call as unknown as { callback: grpc.sendUnaryData<unknown> }).callback;
    if (step.headers) call.sendMetadata(headersOf(received.n));
    if (step.delay) await pause(step.delay);
    if (received.cancelled) return;
    const code = step.code ?? grpc.status.OK;
    if (code !== grpc.status.OK) {
      callback({
        code,
        details: step.details ?? `scripted ${grpc.status[code]}`,
        metadata: trailersOf(step),
      });
      return;
    }
    if (!step.headers) call.sendMetadata(headersOf(received.n));
    callback(null, { text: `reply ${received.n}`, call: received.n }, trailersOf(step));
  }

  private async answerStream(
    call: grpc.ServerWritableStream<unknown, unknown>,
    step: Step,
    received: Received,
  ): Promise<void> {
    if (step.headers) call.sendMetadata(headersOf(received.n));
    if (step.delay) await pause(step.delay);
    for (let i = 1; i <= (step.messages ?? 0) && !received.cancelled; i++)
      call.write({ text: `message ${i}`, call: received.n });
    await this.endStream(call, step, received);
  }

  /**
   * Feed.Tail: items `{ seq }` from the request's `from` up to (not including) its `to`; with
   * `messages`, only that many before the step's status (a failure mid-stream), or with `hold` before
   * waiting for the client to cancel.
   */
  private async answerTail(
    call: grpc.ServerWritableStream<unknown, unknown>,
    step: Step,
    received: Received,
  ): Promise<void> {
    const { from, to } = received.request as { from: number; to: number };
    const count = step.messages ?? to - from;
    for (let seq = from; seq < from + count && !received.cancelled; seq++) call.write({ seq });
    if (step.hold) {
      await new Promise((resolve) => call.once('cancelled', resolve));
      return;
    }
    await this.endStream(call, step, received);
  }

  /** Ends a server stream with the step's status (OK by default), once what was written has gone out. */
  private async endStream(
    call: grpc.ServerWritableStream<unknown, unknown>,
    step: Step,
    received: Received,
  ): Promise<void> {
    if (received.cancelled) return;
    const code = step.code ?? grpc.status.OK;
    if (code !== grpc.status.OK) {
      // Let the messages written so far reach the client before the failing status.
      await pause(10);
      call.emit('error', {
        code,
        details: step.details ?? `scripted ${grpc.status[code]}`,
        metadata: trailersOf(step),
      });
    } else call.end();
  }

  private answerCollect(
    call: grpc.ServerReadableStream<unknown, unknown>,
    step: Step,
    received: Received,
  ): void {
    const callback = (call as unknown as { callback: grpc.sendUnaryData<unknown> }).callback;
    let count = 0;
    call.on('data', () => count++);
    call.on('end', () => {
      const code = step.code ?? grpc.status.OK;
      if (code !== grpc.status.OK)
        callback({
          code,
          details: step.details ?? `scripted ${grpc.status[code]}`,
          metadata: trailersOf(step),
        });
      else callback(null, { text: `collected ${count}`, call: received.n });
    });
  }
}

/**
 * Settles `pending` while moving `clock` to each pending timer every 2 ms of real time, so the
 * policy's waits (backoff, pauses) pass at once while the real socket does its part.
 */
export function driveClock(clock: FakeClock): <T>(pending: Promise<T>) => Promise<T> {
  return async (pending) => {
    let done = false;
    void pending.finally(() => (done = true));
    while (!done) {
      await pause(2);
      const due = clock.nextDue;
      if (due !== undefined) await clock.advance(due - clock.now());
    }
    return pending;
  };
}

/**
 * A client of `service` through the resilience interceptor built with `options`, under a FakeClock
 * policy (`Resilience.default` with exponential backoff without jitter, then `changes`) whose events
 * `recorder` keeps; `drive` settles a call while moving the fake clock ({@link driveClock}).
 */
export function interceptedClient(
  server: LoopbackGrpc,
  service: 'Echo' | 'Ledger' | 'Feed',
  options: Partial<ResilienceInterceptorOptions>,
  changes: PolicyOptions = {},
) {
  const clock = new FakeClock();
  const recorder = new EventRecorder();
  const policy = Resilience.default
    .with({ clock, backoff: Backoff.exponential({ jitter: Jitter.none }), ...changes })
    .withListener(recorder.record);
  const interceptor = createResilienceInterceptor({ policy, ...options });
  const client = server.client(service, { interceptors: [interceptor] });
  return { clock, recorder, interceptor, client, drive: driveClock(clock) };
}

/** The outcome of one unary call: the reply or the error, and the response headers the client saw. */
export interface UnaryOutcome {
  readonly reply: { text: string; call: number } | undefined;
  readonly error: grpc.ServiceError | undefined;
  readonly headers: grpc.Metadata[];
}

/** Calls unary `method` and waits for it; `onCall` receives the call (to cancel it). */
export function unary(
  client: Record<string, (...args: unknown[]) => unknown>,
  method: string,
  options: grpc.CallOptions = {},
  onCall?: (call: grpc.ClientUnaryCall) => void,
): Promise<UnaryOutcome> {
  const headers: grpc.Metadata[] = [];
  return new Promise((resolve) => {
    const call = client[method]!(
      { text: 'hello' },
      new grpc.Metadata(),
      options,
      (error: grpc.ServiceError | null, reply?: { text: string; call: number }) => {
        resolve({ reply: error ? undefined : reply, error: error ?? undefined, headers });
      },
    ) as grpc.ClientUnaryCall;
    call.on('metadata', (metadata: grpc.Metadata) => headers.push(metadata));
    onCall?.(call);
  });
}

/** Reads a server stream to its end: the messages received and the error it ended with, if any. */
export function stream(
  client: Record<string, (...args: unknown[]) => unknown>,
  method: string,
  options: grpc.CallOptions = {},
): Promise<{
  messages: { text: string; call: number }[];
  error: grpc.ServiceError | undefined;
  headers: grpc.Metadata[];
}> {
  const messages: { text: string; call: number }[] = [];
  const headers: grpc.Metadata[] = [];
  return new Promise((resolve) => {
    const call = client[method]!(
      { text: 'hello' },
      new grpc.Metadata(),
      options,
    ) as grpc.ClientReadableStream<{ text: string; call: number }>;
    call.on('metadata', (metadata: grpc.Metadata) => headers.push(metadata));
    call.on('data', (message: { text: string; call: number }) => messages.push(message));
    call.on('error', (error: grpc.ServiceError) => resolve({ messages, error, headers }));
    call.on('end', () => resolve({ messages, error: undefined, headers }));
  });
}
