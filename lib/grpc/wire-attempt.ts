import type { InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import { type AttemptContext, GrpcStatus } from '../core/index.js';
import type { OutboundCall } from '../outbound/outbound-call.js';
import { describe } from './final-status.js';
import { GrpcStatusError } from './grpc-status.error.js';
import type { WireCall } from './wire-call.js';

/** Where a committed stream's later messages and its status go: the client's side of the call. */
export interface StreamSink {
  message(message: unknown): void;
  status(status: StatusObject): void;
}

/**
 * One unary or server-streaming attempt on a call below, read up to the end the policy accepts: a
 * unary answer (its message and OK status), or a stream's first message; any other status rejects
 * with `GrpcStatusError` (or the relayed refusal `refusal` makes of it). The attempt's signal
 * cancels the call while the client does not have it. Once committed, a stream's later messages and
 * status go to the client ({@link WireAttempt.commit}).
 */
export class WireAttempt {
  /** The response headers, once received (and before the client has the stream). */
  headers: Metadata | undefined = undefined;
  /** A unary answer's message. */
  message: unknown = undefined;
  /** False for a unary answer without a message. */
  hasMessage = false;
  /** A unary attempt's OK status; for a stream, the status if it ended before being committed. */
  status: StatusObject | undefined = undefined;
  private sink: StreamSink | undefined = undefined;
  private answered = false;
  private settled = false;

  /**
   * @param wire the call below, not yet started
   * @param context the attempt it carries
   * @param streaming true for a server stream (answered at its first message)
   * @param call the call's outbound protocol, told of the attempt's outcome
   * @param refusal the relayed refusal a failing status stands for, if any
   */
  constructor(
    readonly wire: WireCall,
    private readonly context: AttemptContext,
    private readonly streaming: boolean,
    private readonly call: OutboundCall<WireCall>,
    private readonly refusal: (status: StatusObject) => Error | undefined,
  ) {}

  /** Starts the call with `metadata`, sends the request (when the client sent one); resolves with this attempt answered. */
  run(
    metadata: Metadata,
    request: { readonly message: unknown } | undefined,
  ): Promise<WireAttempt> {
    const { wire, context, streaming } = this;
    const signal = context.signal;
    return new Promise<WireAttempt>((resolve, reject) => {
      const onAbort = (): void => {
        // A timeout, the deadline or the caller ended this attempt; a stream answer the policy did
        // not take (its timer won the race) is cancelled here too, so no orphan stream stays open.
        if (this.sink === undefined)
          wire.cancelWithStatus(
            GrpcStatus.CANCELLED,
            `attempt ${context.attempt} abandoned: ${describe(signal.reason)}`,
          );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const release = (): void => signal.removeEventListener('abort', onAbort);
      const listener: InterceptingListener = {
        onReceiveMetadata: (received) => {
          if (this.sink === undefined) this.headers = received;
        },
        onReceiveMessage: (received) => {
          if (!streaming) {
            this.message = received;
            this.hasMessage = received !== null;
          } else if (this.answered) this.sink?.message(received);
          else {
            this.answered = this.settled = true;
            this.message = received;
            this.hasMessage = true;
            // Its call stays open: cancelled unless the client gets it.
            resolve(this.call.answered(context, this, wire));
          }
        },
        onReceiveStatus: (status) => {
          if (this.answered) {
            // A stream already answered: the status goes to the client once it is committed.
            release();
            if (this.sink !== undefined) this.sink.status(status);
            else this.status = status;
            return;
          }
          if (this.settled) return;
          this.settled = true;
          release();
          if (status.code === GrpcStatus.OK) {
            this.answered = true;
            this.status = status;
            resolve(this.call.answered(context, this, undefined));
          } else {
            const error = this.refusal(status) ?? new GrpcStatusError(status, this.headers);
            reject(this.call.failed(context, error));
          }
        },
      };
      wire.start(metadata, listener);
      if (request !== undefined) wire.sendMessage(request.message);
      wire.halfClose();
      if (streaming) wire.startRead();
    });
  }

  /** The client has this answer: a stream's later messages and its status go to `sink`. */
  commit(sink: StreamSink): void {
    this.sink = sink;
  }
}
