import type { AttemptContext, Policy } from '../core/index.js';
import { type WireSetter, ambientStamp, marksNestedRetry, stampAttempt } from './stamp.js';

/** What the classifier needs to know about the logical call an outcome belongs to. */
export interface CallFacts {
  /** True when the request may be sent again after any retryable failure (idempotent, or keyed). */
  readonly repeatable: boolean;
}

/**
 * Where a transport keeps what the classifier must know of an outcome (the HTTP hosts' memory:
 * a request not safe to repeat makes a retryable failure final).
 */
export interface OutcomeMemory {
  /** Ties `subject` (an answer or an error) to the facts of the call that produced it. */
  remember(subject: unknown, facts: CallFacts): void;
  /** Ties the reason `signal` aborts with (a timeout, a deadline) to the facts, when it aborts. */
  rememberAbort(signal: AbortSignal, facts: CallFacts): void;
  /** Whether the classifier stopped the call on `subject` only because its request is not repeatable. */
  stoppedAsNotRepeatable(subject: unknown): boolean;
}

/**
 * The per-call protocol every outbound client of the library follows, whatever the transport: the
 * nested-retry decision made once, each attempt stamped by the one rule ({@link stampAttempt}),
 * outcomes remembered for the classifier, the last attempt's outcome kept for the final error, and a
 * failed attempt's answer (a response body, a stream) released before the next attempt goes out,
 * since nobody will read it. The transport's adapter (fetch, axios) owns the wire; this owns the rules.
 * @typeParam B what a failed attempt leaves to release (a `Response`, an axios `data` stream)
 */
export class OutboundCall<B> {
  /** Whether the first attempt carries the nested-retry marker. */
  readonly retrying: boolean;
  /** The attempt number of the latest attempt (0 before the first). */
  attempts = 0;
  /** The latest attempt's outcome: its answer or what it threw (`undefined` before the first). */
  last: unknown = undefined;
  private pending: B | undefined;

  /**
   * @param policy the policy the call runs under (the host's)
   * @param facts whether the request may be sent again
   * @param memory where outcomes are remembered for the classifier
   * @param release lets go of a failed attempt's answer (never throws)
   */
  constructor(
    readonly policy: Policy,
    readonly facts: CallFacts,
    private readonly memory: OutcomeMemory,
    private readonly release: (answer: B) => void,
  ) {
    this.retrying = marksNestedRetry(policy.options.attempts, facts.repeatable);
  }

  /** An attempt starts: the previous attempt's answer is released, and an abort of this one remembered. */
  begin(context: AttemptContext): void {
    this.settleAnswer();
    this.attempts = context.attempt;
    this.memory.rememberAbort(context.signal, this.facts);
  }

  /** Stamps this attempt's headers: marker, remaining time (with the inbound request's) and, when asked, criticality. */
  stamp(set: WireSetter, context: AttemptContext, propagateCriticality: boolean): void {
    stampAttempt(set, {
      retrying: this.retrying,
      attempt: context.attempt,
      bound: context.bound,
      ...ambientStamp(propagateCriticality),
    });
  }

  /** The attempt answered with `answer`; `releasable` is what to let go if another attempt follows. */
  answered<A>(answer: A, releasable: B | undefined): A {
    this.memory.remember(answer, this.facts);
    this.last = answer;
    this.pending = releasable;
    return answer;
  }

  /** The attempt failed with `error`; `releasable` is what it leaves to let go (a failed answer's body). Returns `error` to throw. */
  failed(error: unknown, releasable?: B): unknown {
    this.memory.remember(error, this.facts);
    this.last = error;
    this.pending = releasable;
    return error;
  }

  /** The caller owns the latest answer now: it is never released. */
  keep(): void {
    this.pending = undefined;
  }

  /**
   * The call rejected (aborted or refused in backoff, attempts over): a failed answer nobody will read
   * is released now rather than at a next attempt that never comes (a one-socket keep-alive agent
   * would wait on it for ever). `carried` is the answer the final error hands to the caller (an
   * axios error's `response.data`): that one is kept.
   */
  abandon(carried?: unknown): void {
    if (this.pending !== undefined && this.pending === carried) this.pending = undefined;
    else this.settleAnswer();
  }

  /**
   * The error the call rejects with: `notRepeatable(error)` (the transport's "why this was not sent
   * again") when the classifier stopped the call only because the request is not repeatable and
   * attempts were left, else `error` itself.
   */
  finalError(error: unknown, notRepeatable: (error: unknown) => unknown): unknown {
    return this.memory.stoppedAsNotRepeatable(error) && this.attempts < this.policy.options.attempts
      ? notRepeatable(error)
      : error;
  }

  private settleAnswer(): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined) this.release(pending);
  }
}
