import { type AttemptContext, AttemptSupersededError, type Policy } from '../core/index.js';
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
 * outcomes remembered for the classifier, the last attempt's outcome kept for the final error, a
 * failed attempt's answer (a response body, a stream) released before the next attempt goes out,
 * since nobody will read it, and the hedging decision: a hedged policy races attempts of the call
 * only when the transport says the request may be sent twice at once (`hedgeable`). Attempts may
 * then overlap: every answer not handed to the caller is released — a loser's at once (its signal
 * aborted with `AttemptSupersededError`), any other when the call settles — and a loser's outcome
 * is never the call's `last`. The transport's adapter (fetch, axios) owns the wire; this owns the rules.
 * @typeParam B what a failed attempt leaves to release (a `Response`, an axios `data` stream)
 */
export class OutboundCall<B> {
  /** Whether the first attempt carries the nested-retry marker. */
  readonly retrying: boolean;
  /** The attempt number of the latest attempt (0 before the first). */
  attempts = 0;
  /** The latest attempt's outcome: its answer or what it threw (`undefined` before the first). */
  last: unknown = undefined;
  /** Answers of settled attempts not yet released nor handed to the caller. */
  private readonly held: B[] = [];

  /**
   * @param policy the policy the call runs under (the host's)
   * @param facts whether the request may be sent again
   * @param memory where outcomes are remembered for the classifier
   * @param release lets go of a failed attempt's answer (never throws)
   * @param hedgeable whether the request may be sent twice at once (a hedged policy then races its
   *   attempts): the transport's rule (HTTP: GET, HEAD, OPTIONS or a keyed request with a body that
   *   can be sent again; gRPC: a unary method marked repeatable). Default false.
   */
  constructor(
    readonly policy: Policy,
    readonly facts: CallFacts,
    private readonly memory: OutcomeMemory,
    private readonly release: (answer: B) => void,
    readonly hedgeable = false,
  ) {
    this.retrying = marksNestedRetry(policy.options.attempts, facts.repeatable);
  }

  /**
   * An attempt starts: answers of attempts that settled before it are released (each one failed, or
   * the call would have ended; a hedge starts only while another attempt runs), and an abort of this
   * one remembered.
   */
  begin(context: AttemptContext): void {
    this.releaseHeld(undefined);
    if (context.attempt > this.attempts) this.attempts = context.attempt;
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

  /**
   * The attempt `context` answered with `answer`; `releasable` is what to let go unless the caller
   * gets this answer. An attempt already aborted (a loser of a hedged race, one past its bound) has
   * its answer released at once.
   */
  answered<A>(context: AttemptContext, answer: A, releasable: B | undefined): A {
    this.memory.remember(answer, this.facts);
    if (this.settled(context, releasable)) this.last = answer;
    return answer;
  }

  /**
   * The attempt `context` failed with `error`; `releasable` is what it leaves to let go (a failed
   * answer's body). Returns `error` to throw.
   */
  failed(context: AttemptContext, error: unknown, releasable?: B): unknown {
    this.memory.remember(error, this.facts);
    if (this.settled(context, releasable)) this.last = error;
    return error;
  }

  /** The caller owns `answer` (what the call resolved with): it is never released; every other answer is, now. */
  keep(answer: B | undefined): void {
    this.releaseHeld(answer);
  }

  /**
   * The call rejected (aborted or refused in backoff, attempts over): a failed answer nobody will read
   * is released now rather than at a next attempt that never comes (a one-socket keep-alive agent
   * would wait on it for ever). `carried` is the answer the final error hands to the caller (an
   * axios error's `response.data`): that one is kept.
   */
  abandon(carried?: unknown): void {
    this.releaseHeld(carried);
  }

  /**
   * The request options a policy runs the call with: `repeatable` is the transport's hedging
   * decision, replacing the policy's own (a policy marked repeatable never races two sends of a POST).
   */
  get runOptions(): { readonly repeatable: boolean } {
    return { repeatable: this.hedgeable };
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

  /**
   * An attempt's outcome arrived, leaving `releasable`: held until the call settles, or released at
   * once when the attempt was already aborted. False for a loser of a hedged race (its outcome is
   * not the call's).
   */
  private settled(context: AttemptContext, releasable: B | undefined): boolean {
    const signal = context.signal;
    if (signal.aborted) {
      if (releasable !== undefined) this.release(releasable);
      return !(signal.reason instanceof AttemptSupersededError);
    }
    if (releasable !== undefined) this.held.push(releasable);
    return true;
  }

  /** Releases every held answer but `kept`. */
  private releaseHeld(kept: unknown): void {
    const held = this.held;
    if (held.length === 0) return;
    const answers = held.splice(0);
    for (const answer of answers) if (answer !== kept) this.release(answer);
  }
}
