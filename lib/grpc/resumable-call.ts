import { type InterceptorOptions, Metadata, type NextCall, type StatusObject } from '@grpc/grpc-js';
import {
  type AttemptContext,
  type CheckpointedStream,
  DeadlineExceededError,
  GrpcStatus,
  PolicyConfigError,
} from '../core/index.js';
import { GrpcCallCancelledError } from './grpc-status.error.js';
import { statusFor } from './final-status.js';
import { type CallPlan, ResilientCall } from './resilient-call.js';
import type { ResumeFrom } from './resume-from.js';
import { WireStream } from './wire-stream.js';

/**
 * A server-streaming call given a checkpoint (`resumeFrom`): run as the policy's checkpointed stream
 * (`policy.run({ start, checkpoint, source })`, DESIGN §3.10), so the core's rules apply unchanged —
 * retried until its first message; after it, a silence longer than `attemptTimeout` while the client
 * waits for a message is a stall; a mid-stream failure the classifier calls worth retrying re-opens
 * the stream with the request `resumeFrom` made from the last message the client received, through
 * the same budget, breaker and deadline, at most `restarts` times, each reported as `streamResumed`.
 * The client sees the accepted attempt's headers once, every message once and in order, and the
 * status the stream ended with (the last segment's trailers).
 */
export class ResumableCall extends ResilientCall {
  private stream: CheckpointedStream<unknown> | undefined = undefined;
  /** The segment opened last: the accepted one once the policy resolves (streams are never hedged). */
  private current: WireStream | undefined = undefined;
  private pulling = false;

  /**
   * @param plan the policy and the rules for this call (a server stream)
   * @param options the call options grpc-js gave the interceptor
   * @param nextCall creates a call below; called once per attempt and restart
   * @param resumeFrom the method's checkpoint: the request re-opening the stream after a message
   */
  constructor(
    plan: CallPlan,
    options: InterceptorOptions,
    nextCall: NextCall,
    private readonly resumeFrom: ResumeFrom,
  ) {
    super(plan, options, nextCall);
  }

  override startRead(): void {
    this.pendingReads++;
    this.pump();
  }

  override cancelWithStatus(code: number, details: string): void {
    if (this.finished) return;
    const reason = new GrpcCallCancelledError(code, details);
    this.cancellation.abort(reason);
    // Committed: the stream ends (its source cancelled, no restart) and the client gets its status now.
    if (this.stream !== undefined) this.stop(statusFor(reason));
  }

  protected override outerDeadlinePassed(outer: number): void {
    const expired = new DeadlineExceededError(outer);
    this.cancellation.abort(expired);
    if (this.stream !== undefined) this.stop(statusFor(expired));
  }

  protected override async run(): Promise<void> {
    const { policy, singleShot } = this.plan;
    if (!this.startOuterDeadline()) return;
    const request = this.message;
    const resumeFrom = this.resumeFrom;
    let received = 0;
    try {
      this.stream = await policy.run(
        {
          start: request,
          checkpoint: (message: unknown) => nextRequest(resumeFrom(request, message, ++received)),
          source: (from: unknown, context: AttemptContext) => this.open(from, context),
          // In a single-shot scope the layer above retries: one attempt, no restart.
          restarts: singleShot === true ? 0 : undefined,
        },
        {
          signal: this.cancellation.signal,
          attempts: singleShot === true ? 1 : undefined,
          // The call's facts reach every segment's classification and each restart decision.
          ...this.call.runOptions,
        },
      );
    } catch (error) {
      this.fail(error);
      return;
    }
    if (this.finished) {
      void this.stream.return();
      return;
    }
    const headers = this.current?.headers;
    if (headers !== undefined) this.listener?.onReceiveMetadata?.(headers);
    this.headersSent = true;
    this.pump();
  }

  /** Opens one segment of the stream on a fresh call below, sending `request`. */
  private open(request: unknown, context: AttemptContext): WireStream {
    // Only the caller's deadline goes on the wire: the policy's attempt timeout and deadline bound the
    // wait for the first message (the attempt's signal ends the call), never the whole stream.
    const { wire, metadata } = this.openAttempt(context, Infinity);
    const segment = new WireStream(wire, (status) => this.relayedRefusal(status));
    this.current = segment;
    wire.start(metadata, segment.listener);
    wire.sendMessage(request);
    wire.halfClose();
    return segment;
  }

  /** Hands the client one message per read it asked for; the end or the final failure as its status. */
  private pump(): void {
    const stream = this.stream;
    if (stream === undefined || this.pulling || this.finished || this.pendingReads === 0) return;
    this.pendingReads--;
    this.pulling = true;
    stream.next().then(
      (result) => {
        this.pulling = false;
        if (this.finished) return;
        if (result.done === true) {
          this.finish(this.current?.status ?? okStatus());
          return;
        }
        this.listener?.onReceiveMessage?.(result.value);
        this.pump();
      },
      (error: unknown) => {
        this.pulling = false;
        if (!this.finished) this.fail(error);
      },
    );
  }

  /** Ends the committed stream early (no restart follows) and gives the client `status`. */
  private stop(status: StatusObject): void {
    void this.stream?.return();
    this.finish(status);
  }
}

function okStatus(): StatusObject {
  return { code: GrpcStatus.OK, details: 'OK', metadata: new Metadata() };
}

/** What `resumeFrom` returned, checked: a request message to re-open the stream with. */
function nextRequest(request: unknown): unknown {
  if (typeof request !== 'object' || request === null)
    throw new PolicyConfigError(
      'resumeFrom',
      request,
      'must return the request (an object) that re-opens the stream after the last message',
    );
  // A promise would be serialized as an empty request: the stream would re-open from the start.
  if (typeof (request as { then?: unknown }).then === 'function')
    throw new PolicyConfigError(
      'resumeFrom',
      'a promise',
      'must return the request itself, synchronously (it is called for every message, before the client gets it)',
    );
  return request;
}
