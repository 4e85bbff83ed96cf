import { type AbortSubscription, subscribeAbort, unsubscribeAbort } from '../signals/abort-link.js';

/** What the protected function receives on each attempt. */
export interface AttemptContext {
  /**
   * This attempt's signal: aborted when the caller aborts, the attempt times out, or the deadline
   * passes. Created on first read, so work that never reads it pays nothing for it. It is not aborted
   * when the attempt returns: a response body read after the attempt resolved keeps working.
   */
  readonly signal: AbortSignal;
  /** 1-based attempt number. */
  readonly attempt: number;
  /**
   * Milliseconds this attempt may run, counted from its start: the lower of `attemptTimeout` and the
   * time left on the call's deadline (the ambient one included); `Infinity` when nothing bounds it.
   * What a client puts on the wire as the remaining time for the server (gRPC adds a little slack,
   * so the policy's timer fires first).
   */
  readonly bound: number;
  /**
   * Milliseconds from this attempt's start until the call's deadline (the ambient one included),
   * ignoring `attemptTimeout`; `Infinity` without one. A stream's wire deadline uses it, since the
   * attempt timeout bounds only the wait for the first element.
   */
  readonly remaining: number;
}

// One field says both whether and why the attempt was aborted (each field costs every attempt 8 bytes).
const NOT_ABORTED: unique symbol = Symbol('notAborted');

/** An attempt's context as the executor holds it: why it was aborted, abort it, end it. */
export interface AttemptHandle extends AttemptContext {
  /** Why this attempt was aborted (a timeout, the deadline, the caller), or `undefined`. */
  readonly reason: unknown;
  /** Aborts this attempt's signal with `reason`. */
  abort(reason: unknown): void;
  /** Drops what links the attempt to the caller; called when the attempt has settled. */
  end(): void;
}

/** The executor's side of an attempt context: lazy controller, caller link, abort on bounds. */
export class Attempt implements AttemptHandle {
  private controller: AbortController | undefined = undefined;
  private abortReason: unknown = NOT_ABORTED;
  private subscription: AbortSubscription | undefined = undefined;

  constructor(
    readonly attempt: number,
    private readonly caller: AbortSignal | undefined,
    readonly bound = Infinity,
    readonly remaining = Infinity,
  ) {}

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = (this.controller = new AbortController());
      const caller = this.caller;
      if (this.abortReason !== NOT_ABORTED) controller.abort(this.abortReason);
      else if (caller !== undefined) {
        if (caller.aborted) controller.abort(caller.reason);
        else this.subscription = subscribeAbort(caller, () => this.abort(caller.reason));
      }
    }
    return this.controller.signal;
  }

  /** Why this attempt was aborted (a timeout, the deadline, the caller), or `undefined`. */
  get reason(): unknown {
    return this.abortReason === NOT_ABORTED ? undefined : this.abortReason;
  }

  /** Aborts this attempt's signal with `reason` (a timeout, the deadline, the caller). */
  abort(reason: unknown): void {
    if (this.abortReason !== NOT_ABORTED) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  /** Drops the link to the caller's signal; called when the attempt has settled. */
  end(): void {
    if (this.subscription !== undefined) {
      unsubscribeAbort(this.subscription);
      this.subscription = undefined;
    }
  }
}
