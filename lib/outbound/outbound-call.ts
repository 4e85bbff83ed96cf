import {
  Ambient,
  type AttemptContext,
  AttemptSupersededError,
  type Policy,
  type RunOptions,
} from '../core/index.js';
import { CallFacts } from './call-facts.js';
import {
  type AttemptStamp,
  type WireSetter,
  ambientStamp,
  marksNestedRetry,
  stampAttempt,
} from './stamp.js';

export { CallFacts } from './call-facts.js';

/** What an outbound client knows of one request before its first attempt, read once. */
export interface OutboundRequest {
  /** True when the request may be sent again after any retryable failure (idempotent, or keyed). */
  readonly repeatable: boolean;
  /**
   * Whether the request may be sent twice at once (a hedged policy then races its attempts): the
   * transport's rule (HTTP: GET, HEAD, OPTIONS or a keyed request with a body that can be sent again;
   * gRPC: a unary method marked repeatable). Default false.
   */
  readonly hedgeable?: boolean;
  /**
   * The error an attempt after the first throws because the request's body cannot be sent again
   * (`last` is the previous attempt's outcome, for its `cause`); `undefined` when it can (default).
   */
  readonly notReplayable?: (last: unknown) => unknown;
  /** Send the ambient criticality with every attempt. Default false. */
  readonly propagateCriticality?: boolean;
  /**
   * Whether the call was made in a single-shot scope (`Ambient.singleShot`), as the transport read it
   * when the call was made: a repeatable request then carries the nested-retry marker even with one
   * attempt. Default: the ambient context when the `OutboundCall` is made.
   */
  readonly singleShot?: boolean;
}

/**
 * What a transport knows itself of an attempt's time and criticality, stamped instead of the
 * attempt's bound and the ambient context's readings (gRPC: a stream's wire carries no policy bound,
 * the time left is the caller's own deadline's, the criticality is read when the call was made).
 * Durations in ms.
 */
export type OwnStamp = Pick<AttemptStamp, 'bound' | 'outer' | 'criticality'>;

/** How the end of an outbound call reaches its caller ({@link OutboundCall.run}). */
export interface OutboundEnding<A> {
  /** What of the answer the call resolved with the caller owns, never released (the answer, its `data`). */
  readonly owned: (answer: A) => unknown;
  /** The transport's "why this was not sent again" wrapping `error` ({@link OutboundCall.finalError}). */
  readonly notRepeatable: (error: unknown) => unknown;
  /** The answer the final error hands to the caller (an axios error's `response.data`), kept. Default none. */
  readonly carried?: (final: unknown) => unknown;
  /** Told the final error before the call rejects with it (the transport's dependency-failure mark). */
  readonly failed?: (final: unknown) => void;
}

/** Headers an attempt is stamped on (`Headers`, axios's `AxiosHeaders`). */
export interface StampedHeaders {
  set(name: string, value: string): unknown;
  delete(name: string): unknown;
}

/**
 * The per-call protocol every outbound client of the library follows, whatever the transport: the
 * nested-retry decision made once, each attempt stamped by the one rule ({@link stampAttempt}), the
 * call's facts handed to its classifier ({@link CallFacts}), a body that cannot be sent again
 * refused before a second send, the last attempt's outcome kept for the final error, a failed
 * attempt's answer (a response body, a stream) released before the next attempt goes out, since
 * nobody will read it, and the hedging decision: a hedged policy races attempts of the call only
 * when the transport says the request may be sent twice at once (`hedgeable`). Attempts may then
 * overlap: every answer not handed to the caller is released — a loser's at once (its signal
 * aborted with `AttemptSupersededError`), any other when the call settles — and a loser's outcome
 * is never the call's `last`. The transport's adapter (fetch, axios, gRPC) owns the wire; this owns
 * the rules.
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

  /** What the call's classifier reads (`ClassifyContext.facts`) and records its stop on. */
  readonly facts: CallFacts;
  /** Whether the request may be sent twice at once (see {@link OutboundRequest.hedgeable}). */
  readonly hedgeable: boolean;
  private readonly request: OutboundRequest;

  /**
   * @param policy the policy the call runs under (the host's)
   * @param request what the request is: repeatable, hedgeable, its body's replay, criticality
   * @param release lets go of a failed attempt's answer (never throws)
   */
  constructor(
    readonly policy: Policy,
    request: OutboundRequest,
    private readonly release: (answer: B) => void,
  ) {
    this.request = request;
    this.facts = new CallFacts(request.repeatable);
    this.hedgeable = request.hedgeable === true;
    const singleShot = request.singleShot ?? Ambient.current()?.singleShot === true;
    this.retrying = marksNestedRetry(policy.options.attempts, request.repeatable, singleShot);
    // A single-shot scope allows the call one attempt, whatever its policy says (as the executor does).
    this.allowed = singleShot ? 1 : policy.options.attempts;
  }

  /** The attempts this call may make: 1 in a single-shot scope, else its policy's. */
  private readonly allowed: number;

  /**
   * An attempt starts: answers of attempts that settled before it are released (each one failed, or
   * the call would have ended; a hedge starts only while another attempt runs).
   * @throws the request's `notReplayable` error when this attempt would send its body a second time
   *   and the body cannot be sent again
   */
  begin(context: AttemptContext): void {
    this.releaseHeld(undefined);
    if (context.attempt > this.attempts) this.attempts = context.attempt;
    const notReplayable = this.request.notReplayable;
    if (notReplayable !== undefined && context.attempt > 1) throw notReplayable(this.last);
  }

  /**
   * Stamps this attempt through `set`: marker, remaining time and, when asked, criticality. The time
   * left is the attempt's bound with the inbound request's, and the criticality the ambient one,
   * unless the transport gives its `own`.
   */
  stamp(set: WireSetter, context: AttemptContext, own?: OwnStamp): void {
    stampAttempt(set, {
      retrying: this.retrying,
      attempt: context.attempt,
      ...(own ?? {
        bound: context.bound,
        ...ambientStamp(this.request.propagateCriticality === true),
      }),
    });
  }

  /** {@link OutboundCall.stamp} on headers: a value set, a removed marker deleted. */
  stampHeaders(headers: StampedHeaders, context: AttemptContext): void {
    this.stamp(
      (name, value) => (value === undefined ? headers.delete(name) : headers.set(name, value)),
      context,
    );
  }

  /**
   * The attempt `context` answered with `answer`; `releasable` is what to let go unless the caller
   * gets this answer. An attempt already aborted (a loser of a hedged race, one past its bound) has
   * its answer released at once.
   */
  answered<A>(context: AttemptContext, answer: A, releasable: B | undefined): A {
    if (this.settled(context, releasable)) this.last = answer;
    return answer;
  }

  /**
   * The attempt `context` failed with `error`; `releasable` is what it leaves to let go (a failed
   * answer's body). Returns `error` to throw.
   */
  failed(context: AttemptContext, error: unknown, releasable?: B): unknown {
    if (this.settled(context, releasable)) this.last = error;
    return error;
  }

  /** The caller owns `answer` (what the call resolved with): it is never released; every other answer is, now. */
  keep(answer: unknown): void {
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
   * decision, replacing the policy's own (a policy marked repeatable never races two sends of a
   * POST); `facts` reach the classifier.
   */
  get runOptions(): { readonly repeatable: boolean; readonly facts: CallFacts } {
    return { repeatable: this.hedgeable, facts: this.facts };
  }

  /**
   * The error the call rejects with: `notRepeatable(error)` (the transport's "why this was not sent
   * again") when the classifier stopped the call only because the request is not repeatable and
   * attempts were left (none are in a single-shot scope), else `error` itself.
   */
  finalError(error: unknown, notRepeatable: (error: unknown) => unknown): unknown {
    return this.facts.stoppedAsNotRepeatable(error) && this.attempts < this.allowed
      ? notRepeatable(error)
      : error;
  }

  /**
   * The call rejected with `error`: its final error ({@link OutboundCall.finalError}), after every
   * answer not handed on is released ({@link OutboundCall.abandon}); `carried(final)` names the
   * answer the final error hands to the caller (kept). Returns the error to throw.
   */
  rejected(
    error: unknown,
    notRepeatable: (error: unknown) => unknown,
    carried?: (final: unknown) => unknown,
  ): unknown {
    const final = this.finalError(error, notRepeatable);
    this.abandon(carried?.(final));
    return final;
  }

  /**
   * Runs the call under its policy: `attempt` for each attempt, with `options` (the caller's signal,
   * a hold, a quota) and the call's own hedging decision and facts ({@link OutboundCall.runOptions}).
   * Resolves with the answer the call resolved with, what of it the caller owns kept and every other
   * answer released; rejects with the final error ({@link OutboundCall.rejected}) once
   * `ending.failed` has seen it.
   */
  async run<A>(
    attempt: (context: AttemptContext) => Promise<A>,
    options: Omit<RunOptions, 'repeatable' | 'facts'>,
    ending: OutboundEnding<A>,
  ): Promise<A> {
    let answer: A;
    try {
      answer = (await this.policy.run(attempt, { ...options, ...this.runOptions })) as A;
    } catch (error) {
      const final = this.rejected(error, ending.notRepeatable, ending.carried);
      ending.failed?.(final);
      throw final;
    }
    this.keep(ending.owned(answer));
    return answer;
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
