import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import {
  type AttemptContext,
  type Criticality,
  DeadlineExceededError,
  GrpcStatus,
  type Policy,
  type TimerHandle,
  WallClock,
} from '../core/index.js';
import { OutboundCall } from '../outbound/outbound-call.js';
import { markGrpcFailure } from './dependency-failure.js';
import { statusFor } from './final-status.js';
import { GrpcCallCancelledError, GrpcStatusError } from './grpc-status.error.js';
import { relayedRefusal } from './relayed-refusal.js';
import { type WireCall, cancelUnread, metadataSetter } from './wire-call.js';
import { type StreamSink, WireAttempt } from './wire-attempt.js';
import { callerTimeLeft, wireDeadline } from './wire-deadline.js';

/** What a call is run with, decided by the interceptor from the method and its options. */
export interface CallPlan {
  /** The service's (or method's) policy. */
  readonly policy: Policy;
  /** False: one attempt only and no nested-retry marker (the method is not marked repeatable). */
  readonly repeatable: boolean;
  /**
   * True in a single-shot scope (`Ambient.singleShot`): one attempt, but a repeatable call still
   * carries the nested-retry marker, since the layer above retries it.
   */
  readonly singleShot?: boolean;
  /** True for server streaming: retried only until the first message. */
  readonly streaming: boolean;
  /** Time left, ms, of the inbound request being served (`Infinity` when none). */
  readonly inboundRemaining: number;
  /** Criticality to send with each attempt, `undefined` for none. */
  readonly criticality: Criticality | undefined;
  /** The service (or method) whose state the call runs under, for the dependency named in a failure. */
  readonly service?: string;
}

/**
 * One logical unary or server-streaming call: buffers what the client sends (metadata, the one
 * request message), runs attempts on fresh calls below it under the policy, and delivers to the
 * client only the accepted attempt (a unary answer, or a stream from its first message on) or the
 * final failure, so the client never sees a failed attempt's headers or a duplicate message.
 */
export class ResilientCall {
  protected listener: Partial<InterceptingListener> | undefined;
  protected metadata: Metadata | undefined;
  protected message: unknown;
  protected hasMessage = false;
  protected readonly cancellation = new AbortController();
  /** The attempt on the wire (and, once committed, the stream being consumed). */
  protected wire: WireCall | undefined;
  private committed: WireAttempt | undefined;
  protected pendingReads = 0;
  /** The client has the response headers: a later failure's headers are not sent again. */
  protected headersSent = false;
  protected finished = false;
  protected outerAt = Infinity;
  private outerTimer: TimerHandle | undefined;
  /**
   * The call's outbound protocol: the marker decided once, each attempt stamped, the hedging
   * decision (a unary method marked repeatable; a stream never), and a stream answer the client
   * does not get cancelled (an earlier attempt's the classifier rejected, one that came too late).
   */
  protected readonly call: OutboundCall<WireCall>;
  /** Where a committed stream's later messages and status go. */
  private readonly sink: StreamSink = {
    message: (message) => this.listener?.onReceiveMessage?.(message),
    status: (status) => this.finish(status),
  };

  /**
   * @param plan the policy and the rules for this call
   * @param options the call options grpc-js gave the interceptor (deadline, parent, credentials, …)
   * @param nextCall creates a call on the next interceptor or the channel; called once per attempt
   */
  constructor(
    protected readonly plan: CallPlan,
    protected readonly options: InterceptorOptions,
    protected readonly nextCall: NextCall,
  ) {
    this.call = new OutboundCall<WireCall>(
      plan.policy,
      {
        repeatable: plan.repeatable,
        hedgeable: plan.repeatable && !plan.streaming,
        singleShot: plan.singleShot,
      },
      cancelUnread,
    );
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
  }

  sendMessageWithContext(
    context: { callback?: (error?: Error | null) => void },
    message: unknown,
  ): void {
    this.message = message;
    this.hasMessage = true;
    context.callback?.();
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    void this.run();
  }

  startRead(): void {
    if (this.committed !== undefined) this.committed.wire.startRead();
    else this.pendingReads++;
  }

  cancelWithStatus(code: number, details: string): void {
    if (this.finished) return;
    if (this.committed !== undefined) this.committed.wire.cancelWithStatus(code, details);
    else this.cancellation.abort(new GrpcCallCancelledError(code, details));
  }

  getPeer(): string {
    return this.wire?.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<WireCall['getAuthContext']> {
    return this.wire?.getAuthContext() ?? null;
  }

  /**
   * Starts the call's outer deadline (the caller's own, a parent call's, the inbound request's);
   * false, with the call failed as DEADLINE_EXCEEDED, when no time is left.
   */
  protected startOuterDeadline(): boolean {
    const clock = this.plan.policy.options.clock;
    const outer = callerTimeLeft(this.options, this.plan.inboundRemaining);
    if (!(outer > 0)) {
      this.fail(new DeadlineExceededError(0));
      return false;
    }
    if (outer !== Infinity) {
      this.outerAt = clock.now() + outer;
      this.outerTimer = clock.setTimer(outer, () => this.outerDeadlinePassed(outer));
    }
    return true;
  }

  protected async run(): Promise<void> {
    const { policy, repeatable, singleShot } = this.plan;
    if (!this.startOuterDeadline()) return;
    try {
      const answer = await policy.run((context) => this.attempt(context), {
        signal: this.cancellation.signal,
        attempts: repeatable && singleShot !== true ? undefined : 1,
        ...this.call.runOptions,
      });
      this.commit(answer);
    } catch (error) {
      this.call.abandon();
      this.fail(error);
    }
  }

  /** The caller's or the inbound deadline passed: stop the call, or the stream being consumed. */
  protected outerDeadlinePassed(outer: number): void {
    this.outerTimer = undefined;
    if (this.committed !== undefined)
      this.committed.wire.cancelWithStatus(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
    else this.cancellation.abort(new DeadlineExceededError(outer));
  }

  /**
   * Puts attempt `context` on a fresh call below, bounded on the wire by `bound` (ms) and the
   * caller's time left, its metadata stamped by the outbound protocol; not started.
   * @throws DeadlineExceededError (the call ends) when no time is left: never put on the wire
   */
  protected openAttempt(
    context: AttemptContext,
    bound: number,
  ): { wire: WireCall; metadata: Metadata } {
    this.call.begin(context);
    const outer = this.outerAt - this.plan.policy.options.clock.now();
    const deadline = wireDeadline(bound, outer);
    if (deadline === undefined) {
      const expired = new DeadlineExceededError(Math.max(0, outer));
      this.cancellation.abort(expired);
      throw expired;
    }
    const wire = this.nextCall({ ...this.options, deadline: WallClock.after(deadline) });
    this.wire = wire;
    const metadata = (this.metadata ?? new Metadata()).clone();
    this.call.stamp(metadataSetter(metadata), context, {
      bound,
      outer,
      criticality: this.plan.criticality,
    });
    return { wire, metadata };
  }

  /** One attempt on a fresh call below us; resolves with it answered, rejects with the failure. */
  private attempt(context: AttemptContext): Promise<WireAttempt> {
    const streaming = this.plan.streaming;
    const signal = context.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    let opened: { wire: WireCall; metadata: Metadata };
    try {
      // A stream's attempt timeout and the policy's deadline bound only the wait for its first
      // message (the attempt's signal cancels the call), never the stream (DESIGN §3.10): only the
      // caller's deadline goes on the wire.
      opened = this.openAttempt(context, streaming ? Infinity : context.bound);
    } catch (error) {
      return Promise.reject(error);
    }
    const attempt = new WireAttempt(opened.wire, context, streaming, this.call, (status) =>
      this.relayedRefusal(status),
    );
    return attempt.run(opened.metadata, this.hasMessage ? { message: this.message } : undefined);
  }

  /** The refusal one of our services below answered, when `status` is one ({@link relayedRefusal}). */
  protected relayedRefusal(status: StatusObject): Error | undefined {
    return relayedRefusal(status, () => this.plan.service ?? this.options.method_definition.path);
  }

  /** Delivers the accepted attempt: headers, the message, then the status (or, for a stream, the rest as it comes). */
  private commit(answer: WireAttempt): void {
    if (this.finished) {
      this.call.abandon();
      return;
    }
    this.call.keep(answer.wire);
    this.committed = answer;
    this.wire = answer.wire;
    const listener = this.listener;
    if (answer.headers !== undefined) listener?.onReceiveMetadata?.(answer.headers);
    if (this.plan.streaming) {
      if (answer.hasMessage) {
        if (this.pendingReads > 0) this.pendingReads--;
        listener?.onReceiveMessage?.(answer.message);
      }
      for (; this.pendingReads > 0; this.pendingReads--) answer.wire.startRead();
      if (answer.status !== undefined) this.finish(answer.status);
      else answer.commit(this.sink);
      return;
    }
    listener?.onReceiveMessage?.(answer.hasMessage ? answer.message : null);
    this.finish(answer.status!);
  }

  /** Delivers the final failure as a status the client understands. */
  protected fail(error: unknown): void {
    if (
      error instanceof GrpcStatusError &&
      error.headers !== undefined &&
      !this.finished &&
      !this.headersSent
    )
      this.listener?.onReceiveMetadata?.(error.headers);
    // The dependency failed on every attempt allowed: an exception filter answers 502 and names it.
    markGrpcFailure(error, this.plan.policy, this.plan.service ?? '');
    this.finish(statusFor(error));
  }

  /** Delivers the call's one final status to the client (later ones are dropped) and stops the outer timer. */
  protected finish(status: StatusObject): void {
    if (this.finished) return;
    this.finished = true;
    if (this.outerTimer !== undefined) this.plan.policy.options.clock.clearTimer(this.outerTimer);
    this.outerTimer = undefined;
    this.listener?.onReceiveStatus?.(status);
  }
}
