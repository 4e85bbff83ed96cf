import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import {
  AmbientHeaders,
  type AttemptContext,
  type Criticality,
  DeadlineExceededError,
  GrpcStatus,
  type Policy,
  type TimerHandle,
  WallClock,
} from '../core/index.js';
import { markGrpcFailure } from './dependency-failure.js';
import { describe, statusFor } from './final-status.js';
import { GrpcCallCancelledError, GrpcStatusError } from './grpc-status.error.js';
import { relayedRefusal } from './relayed-refusal.js';
import { callerTimeLeft, wireDeadline } from './wire-deadline.js';
import { type AttemptStamp, marksNestedRetry, stampAttempt } from '../outbound/stamp.js';

/** The call below ours: what `nextCall(options)` returns (grpc-js does not export its interface). */
export type WireCall = ReturnType<NextCall>;

/** Metadata key of the nested-retry marker, the same as the .NET library's (DESIGN §1). */
export const RETRYING_METADATA = AmbientHeaders.retrying;

/**
 * Stamps one attempt's metadata by the rule every transport of the library follows (`stampAttempt`):
 * the nested-retry marker on the first attempt of a call that may retry and removed from every other
 * (a caller's stale copy never travels), the remaining time in whole ms clamped at 0, the criticality.
 */
export function stampMetadata(metadata: Metadata, stamp: AttemptStamp): void {
  stampAttempt(
    (name, value) => (value === undefined ? metadata.remove(name) : metadata.set(name, value)),
    stamp,
  );
}

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

/** An attempt that reached an end the policy accepts: a unary answer, or a stream's first message. */
interface Answer {
  readonly wire: WireCall;
  readonly headers: Metadata | undefined;
  readonly message: unknown;
  readonly hasMessage: boolean;
  /** A unary attempt's OK status; for a stream, the status if it ended before being committed. */
  status: StatusObject | undefined;
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
  private committed: Answer | undefined;
  protected pendingReads = 0;
  /** The client has the response headers: a later failure's headers are not sent again. */
  protected headersSent = false;
  protected finished = false;
  protected outerAt = Infinity;
  private outerTimer: TimerHandle | undefined;

  /**
   * @param plan the policy and the rules for this call
   * @param options the call options grpc-js gave the interceptor (deadline, parent, credentials, …)
   * @param nextCall creates a call on the next interceptor or the channel; called once per attempt
   */
  constructor(
    protected readonly plan: CallPlan,
    protected readonly options: InterceptorOptions,
    protected readonly nextCall: NextCall,
  ) {}

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
        // A hedged policy races calls of a unary method marked repeatable; a stream is never hedged.
        repeatable: repeatable && !this.plan.streaming,
      });
      this.commit(answer);
    } catch (error) {
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

  /** One attempt on a fresh call below us; resolves with an {@link Answer}, rejects with the failure. */
  private attempt(context: AttemptContext): Promise<Answer> {
    const { streaming, repeatable, policy } = this.plan;
    const signal = context.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    const outer = this.outerAt - policy.options.clock.now();
    // A stream's attempt timeout and the policy's deadline bound only the wait for its first message
    // (the attempt's signal cancels the call), never the stream (DESIGN §3.10): only the caller's
    // deadline goes on the wire.
    const bound = streaming ? Infinity : context.bound;
    const deadline = wireDeadline(bound, outer);
    if (deadline === undefined) {
      // No time left: never put this attempt on the wire.
      const expired = new DeadlineExceededError(Math.max(0, outer));
      this.cancellation.abort(expired);
      return Promise.reject(expired);
    }
    return new Promise<Answer>((resolve, reject) => {
      let wire: WireCall;
      try {
        wire = this.nextCall({ ...this.options, deadline: WallClock.after(deadline) });
      } catch (error) {
        reject(error);
        return;
      }
      this.wire = wire;
      let headers: Metadata | undefined;
      let message: unknown = undefined;
      let hasMessage = false;
      let answer: Answer | undefined;
      let settled = false;
      const onAbort = (): void => {
        // A timeout, the deadline or the caller ended this attempt; a stream answer the policy did
        // not take (its timer won the race) is cancelled here too, so no orphan stream stays open.
        if (this.committed?.wire !== wire)
          wire.cancelWithStatus(
            GrpcStatus.CANCELLED,
            `attempt ${context.attempt} abandoned: ${describe(signal.reason)}`,
          );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const release = (): void => signal.removeEventListener('abort', onAbort);
      const metadata = (this.metadata ?? new Metadata()).clone();
      stampMetadata(metadata, {
        retrying: marksNestedRetry(policy.options.attempts, repeatable, this.plan.singleShot),
        attempt: context.attempt,
        bound,
        outer,
        criticality: this.plan.criticality,
      });
      wire.start(metadata, {
        onReceiveMetadata: (received) => {
          if (answer !== undefined && this.committed === answer) return;
          headers = received;
        },
        onReceiveMessage: (received) => {
          if (!streaming) {
            message = received;
            hasMessage = received !== null;
            return;
          }
          if (answer !== undefined) {
            if (this.committed === answer) this.listener?.onReceiveMessage?.(received);
            return;
          }
          settled = true;
          answer = { wire, headers, message: received, hasMessage: true, status: undefined };
          resolve(answer);
        },
        onReceiveStatus: (status) => {
          if (answer !== undefined) {
            // A stream already answered: the status goes to the client once it is committed.
            release();
            if (this.committed === answer) this.finish(status);
            else answer.status = status;
            return;
          }
          if (settled) return;
          settled = true;
          release();
          if (status.code === GrpcStatus.OK) {
            answer = { wire, headers, message, hasMessage, status };
            resolve(answer);
          } else reject(this.relayedRefusal(status) ?? new GrpcStatusError(status, headers));
        },
      });
      if (this.hasMessage) wire.sendMessage(this.message);
      wire.halfClose();
      if (streaming) wire.startRead();
    });
  }

  /** The refusal one of our services below answered, when `status` is one ({@link relayedRefusal}). */
  protected relayedRefusal(status: StatusObject): Error | undefined {
    return relayedRefusal(status, () => this.plan.service ?? this.options.method_definition.path);
  }

  /** Delivers the accepted attempt: headers, the message, then the status (or, for a stream, the rest as it comes). */
  private commit(answer: Answer): void {
    if (this.finished) {
      answer.wire.cancelWithStatus(GrpcStatus.CANCELLED, 'call already finished');
      return;
    }
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
