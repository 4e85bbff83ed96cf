import type { InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import { GrpcStatus } from '../core/index.js';
import { GrpcStatusError } from './grpc-status.error.js';
import type { WireCall } from './wire-call.js';

const DONE: IteratorResult<never> = Object.freeze({ done: true, value: undefined });

/**
 * One server-streaming call on the wire read as an AsyncIterator, the shape the policy's stream
 * rules pull (a checkpointed segment): each pull asks the call for one message (`startRead`, so
 * grpc-js flow control holds), an OK status ends it, any other status rejects the pull with
 * `GrpcStatusError` (or the relayed refusal `refusal` makes of it), and `return()` cancels the call.
 */
export class WireStream implements AsyncIterableIterator<unknown> {
  /** The response headers, once received. */
  headers: Metadata | undefined = undefined;
  /** The final status, once received. */
  status: StatusObject | undefined = undefined;
  private readonly queue: unknown[] = [];
  private waiting:
    | { resolve: (result: IteratorResult<unknown>) => void; reject: (error: unknown) => void }
    | undefined = undefined;
  private failure: unknown = undefined;
  private closed = false;

  /**
   * @param wire the call below, not yet started: {@link WireStream.listener} is what to start it with
   * @param refusal the relayed refusal a failing status stands for, if any (passed up instead of the status)
   */
  constructor(
    private readonly wire: WireCall,
    private readonly refusal: (status: StatusObject) => Error | undefined,
  ) {}

  /** What the call below reports to. */
  readonly listener: InterceptingListener = {
    onReceiveMetadata: (headers) => (this.headers = headers),
    onReceiveMessage: (message) => {
      if (this.closed) return;
      const waiting = this.waiting;
      this.waiting = undefined;
      if (waiting !== undefined) waiting.resolve({ done: false, value: message });
      else this.queue.push(message);
    },
    onReceiveStatus: (status) => {
      this.status = status;
      if (this.closed) return;
      if (status.code !== GrpcStatus.OK)
        this.failure = this.refusal(status) ?? new GrpcStatusError(status, this.headers);
      const waiting = this.waiting;
      this.waiting = undefined;
      if (waiting === undefined) return;
      if (this.failure === undefined) waiting.resolve(DONE);
      else waiting.reject(this.failure);
    },
  };

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The next message; done after an OK status; rejects with the failing status. */
  next(): Promise<IteratorResult<unknown>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.queue.shift() });
    if (this.closed) return Promise.resolve(DONE);
    if (this.status !== undefined) {
      this.closed = true;
      return this.failure === undefined ? Promise.resolve(DONE) : Promise.reject(this.failure);
    }
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.wire.startRead();
    });
  }

  /** Stops reading: the call is cancelled on the wire (unless it already ended); a pending pull resolves done. */
  return(): Promise<IteratorResult<unknown>> {
    if (!this.closed) {
      this.closed = true;
      this.queue.length = 0;
      if (this.status === undefined)
        this.wire.cancelWithStatus(GrpcStatus.CANCELLED, 'stream closed by the client');
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.resolve(DONE);
    }
    return Promise.resolve(DONE);
  }
}
