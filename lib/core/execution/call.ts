import { Ambient } from '../ambient/ambient-context.js';
import { Admission } from '../breaker/breaker-state.js';
import type { Fallback, FallbackStop } from '../fallback/fallback.js';
import { runFallback } from '../fallback/bounded-fallback.js';
import { Verdict } from '../classification/verdict.js';
import type { RejectionReason } from '../errors.js';
import type { AttemptContext, AttemptHandle } from './attempt-context.js';
import type { CallLog } from './call-result.js';
import {
  CallEvent,
  type CallEventInit,
  type CallEventKind,
  type FallbackOutcome,
  type StopReason,
} from '../events/call-events.js';
import { errorName } from './error-name.js';
import type { HeldCall } from './held-call.js';
import type { CallQuota } from '../limits/call-quota.js';
import { type ConcurrencyLimiter, SlotOutcome } from '../limits/concurrency-limiter.js';
import type { HedgeState } from '../hedging/hedge-state.js';
import { ended, started, tell } from './observer.js';
import type { CallPlan } from './plan.js';
import { recordStop } from './stop-reasons.js';

/** The function a policy protects. */
export type Work<T> = (context: AttemptContext) => T | PromiseLike<T>;

/**
 * What a phase tells the loop: go on to the next phase, stop (the call's `reason` and outcome are
 * set), refuse (a guard of this process refused: `refusal` is set; the loop runs the one refusal path),
 * or queue (the concurrency limit is reached and its queue has room: the loop waits for a slot).
 */
export const Step = Object.freeze({ Go: 0, Stop: 1, Refuse: 2, Queue: 3 } as const);
/** What a call holds of its policy's limiter (see `Call.slot`). */
export const Slot = Object.freeze({ None: 0, Held: 1, Queued: 2 } as const);
/** One of the {@link Slot} values. */
export type Slot = (typeof Slot)[keyof typeof Slot];

/** One of the {@link Step} values. */
export type Step = (typeof Step)[keyof typeof Step];

/** A refusal by a guard of this process and the stop reason it ends the call with. */
export const REFUSAL_REASONS = Object.freeze({
  BudgetExhausted: 'budgetExhausted',
  DependencyUnavailable: 'dependencyUnavailable',
  Limited: 'limited',
  QuotaExhausted: 'limited',
} as const satisfies Partial<Record<RejectionReason, StopReason>>);
/** A guard's refusal the executor knows how to report (grows with limiters and quota). */
export type GuardRefusal = keyof typeof REFUSAL_REASONS;

/**
 * What `execute` takes besides the policy and the work: the caller's options for one call (the
 * shape of `RunOptions`, validated by the policy before the call starts).
 */
export interface CallRequest {
  readonly signal?: AbortSignal;
  /** At most this many attempts for this call (fewer than the policy's counts, more is ignored). */
  readonly attempts?: number;
  readonly continuing?: CallContinuation;
  readonly hold?: HeldCall;
  /** The call is safe to send more than once at the same time (a hedge may run it); default the policy's. */
  readonly repeatable?: boolean;
  /** A quota the caller keeps, asked at every attempt's admission (`RunOptions.quota`). */
  readonly quota?: CallQuota;
  /** The caller's facts for its classifier rules (`RunOptions.facts`). */
  readonly facts?: object;
}

// `Call.flags`: the call's booleans and small enumerations in one small integer (a field costs
// every call 8 bytes): seven booleans, then the limiter slot, the breaker's admission and the refusal.
const THREW = 1;
const DEADLINE_HIT = 2;
const BY_ATTEMPT_TIMEOUT = 4;
const CALL_TIMED = 8;
const TIMED = 16;
const HEDGEABLE = 32;
const HEDGE_WON = 64;
const SLOT_SHIFT = 7;
const SLOT_MASK = 3 << SLOT_SHIFT;
const ADMISSION_SHIFT = 9;
const ADMISSION_MASK = 3 << ADMISSION_SHIFT;
const REFUSAL_SHIFT = 11;
const REFUSAL_MASK = 15 << REFUSAL_SHIFT;
/** The refusals by their number in `flags` (0 = none). */
const REFUSALS = [undefined, ...(Object.keys(REFUSAL_REASONS) as GuardRefusal[])] as const;

// A number field first set to a fraction is kept boxed in every call (16 bytes each, even when it
// holds 0); one first set to `undefined` holds small integers unboxed. The untimed success path
// stores only 0 in these, so they start as `undefined` and are always written before they are read.
const UNREAD = undefined as unknown as number;

/**
 * One call's state, the context every rule of the executor reads (admission, retry decision, bounded
 * attempt, recording, refusal, settling): what the policy resolved once (`plan`), the call's own
 * options and clock readings, and the last attempt's outcome. Every field is set in the constructor,
 * so all calls share one object shape; what does not change between calls is read through the plan.
 *
 * Invariant: `error` is `undefined` unless `threw` (a returned value carries no error).
 */
export class Call<T> {
  readonly signal: AbortSignal | undefined;
  /** This call's most attempts: the policy's, or fewer when the caller capped it. */
  readonly maxAttempts: number;
  // The caller's options, read through `hold` and `quota` (one field for both: a field costs every call 8 bytes).
  private readonly request: CallRequest | undefined;
  /** What the observer's `callStarted` returned for this call (or the held call's it carries on). */
  readonly state: unknown;
  /** The call's deadline in ms (the ambient one folded in), `undefined` = none. */
  readonly deadline: number | undefined;
  /** Clock reading at the call's start (0 when not `callTimed`). */
  readonly start: number;
  /** Clock reading at which the deadline passes, `undefined` without one (see `deadlineAt`). */
  private readonly due: number | undefined;

  /** Attempts started so far (the current one included once admitted). */
  attempts = 0;
  /** Retries before this one that followed a server pushback: the computed curve restarts after one (gRFC A6). */
  curveOffset = 0;
  /** Clock reading at the current attempt's start (0 when untimed). */
  attemptStart = UNREAD;
  /** The backoff (ms) the retry decision chose before the next attempt. */
  delay = UNREAD;
  /** The last attempt's verdict. */
  verdict: Verdict | undefined = undefined;
  /** The last attempt's value, or its error when `threw` (one field: see `value` and `error`). */
  private outcome: unknown = undefined;
  /** `threw`, `deadlineHit`, `byAttemptTimeout`, `callTimed`, `timed`, hedgeable, `hedgeWon`, `slot`, `admission` and `refusal`, as bits. */
  private flags = Admission.Closed << ADMISSION_SHIFT;
  /** The last attempt's duration, ms. */
  duration = UNREAD;
  /** The current attempt's context (the executor's side: abort, end). */
  attempt: AttemptHandle | undefined = undefined;
  /** Why the call stops, once a phase says `Stop`. */
  reason: StopReason = 'succeeded';

  /**
   * Starts a call: a new one is counted for the budget's denominator (a continuation is not) and
   * started for its observer (a span opens) before anything else is decided; a continuation is
   * observed as the held call it carries on, when it names one.
   * @param plan what the policy resolved once
   * @param request the caller's options (validated), or `undefined`
   * @param log filled with the stop reason, attempts and duration (`tryRun`), or `undefined`
   */
  constructor(
    readonly plan: CallPlan,
    readonly work: Work<T>,
    request: CallRequest | undefined,
    readonly log: CallLog | undefined,
  ) {
    const o = plan.options;
    const listener = plan.listener;
    let carriedStart: number | undefined;
    let deadlineAt: number | undefined;
    if (request === undefined) {
      // The budget's denominator counts logical calls, once each (a token bucket ignores it).
      plan.bucket?.recordCall();
      this.state = listener === undefined ? undefined : started(listener, plan.policy);
      this.signal = undefined;
      this.request = undefined;
      this.maxAttempts = o.attempts;
    } else {
      const continuing = request.continuing;
      if (continuing === undefined) {
        plan.bucket?.recordCall();
        this.state = listener === undefined ? undefined : started(listener, plan.policy);
      } else {
        // Observed as the held call it carries on (its span, its start), else as a call of its own.
        const carried = continuing.held?.carry();
        carriedStart = carried?.start;
        deadlineAt = continuing.deadlineAt;
        this.state =
          carried !== undefined
            ? carried.state
            : listener === undefined
              ? undefined
              : started(listener, plan.policy);
      }
      this.signal = request.signal;
      this.request = request;
      const capped = request.attempts;
      this.maxAttempts = capped !== undefined && capped < o.attempts ? capped : o.attempts;
    }
    // Clock reads cost ~50 ns each: the call's start is read only when something reports or bounds
    // the call, and attempts are timed only when a report, the breaker or the limiter needs their durations.
    const reported = listener !== undefined || log !== undefined;
    let flags = this.flags | (reported || plan.timesAttempts ? TIMED : 0);
    // A hedge configured and the call repeatable: its attempts race (hedging.ts), timed for the threshold.
    if (plan.hedge !== undefined && (request?.repeatable ?? o.repeatable))
      flags |= HEDGEABLE | TIMED;
    if (deadlineAt !== undefined && deadlineAt !== Infinity) {
      // A continuation keeps the deadline of the call it carries on (an ambient one is already in
      // it), and the start of a held call it carries on.
      this.start = carriedStart ?? o.clock.now();
      this.deadline = o.deadline ?? Math.max(0, deadlineAt - this.start);
      flags |= CALL_TIMED;
      this.due = deadlineAt;
    } else {
      const deadline = (this.deadline =
        deadlineAt === Infinity
          ? undefined
          : o.useAmbientDeadline
            ? tighterDeadline(o.deadline)
            : o.deadline);
      if (reported || deadline !== undefined) flags |= CALL_TIMED;
      this.start = carriedStart ?? ((flags & CALL_TIMED) !== 0 ? o.clock.now() : 0);
      this.due = deadline === undefined ? undefined : this.start + deadline;
    }
    this.flags = flags;
    if (deadlineAt !== undefined) {
      // The attempt that broke the accepted value was a Transient failure: the next is its retry.
      const continuing = request!.continuing!;
      this.attempts = continuing.attempts;
      this.verdict = Verdict.transient;
      this.outcome = continuing.error;
      this.flags |= THREW;
    }
  }

  /** Where a success's terminal event is held instead of told (`RunOptions.hold`). */
  get hold(): HeldCall | undefined {
    return this.request?.hold;
  }

  /** The quota the caller keeps for this call (`RunOptions.quota`), asked at every admission. */
  get quota(): CallQuota | undefined {
    return this.request?.quota;
  }

  /** The caller's facts for its classifier rules (`RunOptions.facts`), `undefined` when none. */
  get facts(): object | undefined {
    return this.request?.facts;
  }

  /** Clock reading at which the deadline passes (`Infinity` without one). */
  get deadlineAt(): number {
    return this.due ?? Infinity;
  }

  /** The last attempt's value (`undefined` when it threw). */
  get value(): T | undefined {
    return (this.flags & THREW) === 0 ? (this.outcome as T | undefined) : undefined;
  }

  set value(value: T | undefined) {
    this.outcome = value;
  }

  /** What the last attempt threw (or the call stopped with), `undefined` unless `threw`. */
  get error(): unknown {
    return (this.flags & THREW) !== 0 ? this.outcome : undefined;
  }

  set error(error: unknown) {
    this.outcome = error;
  }

  get threw(): boolean {
    return (this.flags & THREW) !== 0;
  }

  set threw(threw: boolean) {
    this.flags = threw ? this.flags | THREW : this.flags & ~THREW;
  }

  /** Whether the last attempt was cut off by this call's own deadline. */
  get deadlineHit(): boolean {
    return (this.flags & DEADLINE_HIT) !== 0;
  }

  set deadlineHit(hit: boolean) {
    this.flags = hit ? this.flags | DEADLINE_HIT : this.flags & ~DEADLINE_HIT;
  }

  /** Whether the current attempt is bounded by `attemptTimeout` rather than by the deadline. */
  get byAttemptTimeout(): boolean {
    return (this.flags & BY_ATTEMPT_TIMEOUT) !== 0;
  }

  set byAttemptTimeout(by: boolean) {
    this.flags = by ? this.flags | BY_ATTEMPT_TIMEOUT : this.flags & ~BY_ATTEMPT_TIMEOUT;
  }

  /** Whether the call's start was read (something reports or bounds the call). */
  get callTimed(): boolean {
    return (this.flags & CALL_TIMED) !== 0;
  }

  /** Whether every attempt is timed (a report, the breaker or the limiter reads durations). */
  get timed(): boolean {
    return (this.flags & TIMED) !== 0;
  }

  /** The policy's hedge state when this call may be hedged (a hedge configured, the call repeatable), else `undefined`. */
  get hedging(): HedgeState | undefined {
    return (this.flags & HEDGEABLE) !== 0 ? this.plan.hedge : undefined;
  }

  /** Whether a hedge (an attempt started beside a slower one) answered first. */
  get hedgeWon(): boolean {
    return (this.flags & HEDGE_WON) !== 0;
  }

  set hedgeWon(won: boolean) {
    this.flags = won ? this.flags | HEDGE_WON : this.flags & ~HEDGE_WON;
  }

  /**
   * The slot of the policy's limiter the call holds, from admission until the attempt is recorded:
   * `Slot.None`, `Slot.Held`, or `Slot.Queued` (held after waiting in the queue: the attempt starts
   * when the wait ended, not at the call's start).
   */
  get slot(): Slot {
    return ((this.flags & SLOT_MASK) >> SLOT_SHIFT) as Slot;
  }

  set slot(slot: Slot) {
    this.flags = (this.flags & ~SLOT_MASK) | (slot << SLOT_SHIFT);
  }

  /** What the breaker decided for the current attempt. */
  get admission(): Admission {
    return ((this.flags & ADMISSION_MASK) >> ADMISSION_SHIFT) as Admission;
  }

  set admission(admission: Admission) {
    this.flags = (this.flags & ~ADMISSION_MASK) | (admission << ADMISSION_SHIFT);
  }

  /** The refusal to report, once a phase says `Refuse`. */
  get refusal(): GuardRefusal | undefined {
    return REFUSALS[(this.flags & REFUSAL_MASK) >> REFUSAL_SHIFT];
  }

  set refusal(refusal: GuardRefusal | undefined) {
    this.flags =
      (this.flags & ~REFUSAL_MASK) |
      (refusal === undefined ? 0 : REFUSALS.indexOf(refusal) << REFUSAL_SHIFT);
  }

  /**
   * A clean outcome for the next attempt to fill (no value, no error, not cut off by the deadline),
   * and whether `attemptTimeout` rather than the deadline bounds it.
   */
  clearOutcome(byAttemptTimeout: boolean): void {
    this.outcome = undefined;
    this.flags =
      (this.flags & ~(THREW | DEADLINE_HIT | BY_ATTEMPT_TIMEOUT)) |
      (byAttemptTimeout ? BY_ATTEMPT_TIMEOUT : 0);
  }

  /** Stops the call with `error` as its outcome (cancellation, a deadline, a bug in a curve). */
  fail(reason: StopReason, error: unknown): Step {
    this.reason = reason;
    this.error = error;
    this.threw = true;
    return Step.Stop;
  }

  /**
   * Ends the call: the log's reason and duration, the one terminal event, then the outcome — the
   * value of a success, else the error it stopped with or the last value a classifier rejected. A
   * call the policy's fallback answers (see {@link Fallback}) ends when the fallback settles, with
   * its value or its error, and its terminal event says `fallback: 'served'` or `'failed'`.
   * @param recordedNow true when `record` has just recorded the last attempt, in this same turn: a
   *   call that reports times its attempts, so the call ends at that attempt's end (no second clock
   *   read, ~50 ns); otherwise the end is read now
   */
  settle(recordedNow = false): T | Promise<T> {
    // Only a slot held per call is still held here (per attempt, recording gave it back).
    if (this.slot !== Slot.None) this.releaseCallSlot();
    const reason = this.reason;
    const fallback = this.plan.options.fallback;
    if (fallback !== undefined && reason !== 'succeeded' && fallback.answers(reason))
      return this.fallBack(fallback);
    this.report(reason === 'succeeded' ? undefined : errorName(this.error), undefined, recordedNow);
    if (reason !== 'succeeded' && this.threw) {
      recordStop(this.error, reason);
      throw this.error;
    }
    return this.value as T;
  }

  /**
   * Gives back the slot held per call (`CallPlan.slotPerCall`), told how the call went: answered,
   * dropped (it ended on a Transient or Throttled failure, a timeout, the deadline) or no evidence
   * (a Permanent answer, the caller's abort, a drain).
   */
  private releaseCallSlot(): void {
    this.slot = Slot.None;
    const reason = this.reason;
    const verdict = this.verdict?.kind;
    (this.plan.limiter as ConcurrencyLimiter).releaseHeld(
      this,
      reason === 'succeeded'
        ? SlotOutcome.Answered
        : reason === 'cancelled' ||
            reason === 'draining' ||
            verdict === undefined ||
            verdict === 'Permanent' ||
            verdict === 'Limited'
          ? SlotOutcome.Ignored
          : SlotOutcome.Dropped,
    );
  }

  /** The log and the terminal event (held for a success when `hold` says so); `recordedNow` as in {@link settle}. */
  private report(
    error: string | undefined,
    fallback: FallbackOutcome | undefined,
    recordedNow = false,
  ): void {
    const log = this.log;
    if (this.plan.listener === undefined && log === undefined) return;
    const reason = this.reason;
    const succeeded = reason === 'succeeded';
    const end = recordedNow ? this.attemptStart + this.duration : this.plan.clock.now();
    const duration = end - this.start;
    if (log !== undefined) {
      log.reason = reason;
      log.duration = duration;
      log.fallback = fallback;
    }
    if (this.plan.listener !== undefined) {
      const kind: CallEventKind = succeeded
        ? 'succeeded'
        : this.refusal !== undefined && reason !== 'cancelled'
          ? 'rejected'
          : 'failed';
      const init: CallEventInit = {
        kind,
        policy: this.plan.options.name,
        attempt: this.attempts,
        verdict: this.verdict?.kind,
        error,
        duration,
        reason,
        isTerminal: true,
        fallback,
        hedgeWon: this.hedgeWon,
      };
      const terminal = CallEvent.of(init, this.plan.policy.dependency);
      const hold = this.hold;
      if (succeeded && hold !== undefined) hold.hold(this, terminal);
      else ended(this.plan.listener, this.state, terminal);
    }
  }

  /**
   * Runs the fallback for a call that stopped without a value of its own: resolves with what it
   * returns; a fallback that throws rejects with its own error, the call's error set as that error's
   * `cause` when it has none.
   */
  private async fallBack(fallback: Fallback): Promise<T> {
    const original = this.threw ? this.error : undefined;
    const stop: Omit<FallbackStop, 'signal'> = {
      reason: this.reason,
      error: original,
      value: this.threw ? undefined : this.value,
      attempts: this.attempts,
    };
    try {
      const bounds = {
        clock: this.plan.clock,
        deadlineAt: this.deadlineAt,
        deadline: this.deadline,
        signal: this.signal,
      };
      const value = (await runFallback(fallback, stop, original, bounds)) as T;
      this.report(errorName(original), 'served');
      return value;
    } catch (error) {
      if (
        original !== undefined &&
        error instanceof Error &&
        error !== original &&
        error.cause === undefined
      ) {
        try {
          Object.defineProperty(error, 'cause', {
            value: original,
            configurable: true,
            writable: true,
          });
        } catch {
          // A frozen error keeps what it has.
        }
      }
      this.report(errorName(error), 'failed');
      recordStop(error, this.reason);
      throw error;
    }
  }

  /** Tells the observer (the caller checks there is one, so no event is built for nobody). */
  emit(init: CallEventInit): void {
    tell(this.plan.listener!, CallEvent.of(init, this.plan.policy.dependency), this.state);
  }
}

/**
 * The call's deadline under `useAmbientDeadline`: the lower of the policy's own and the inbound
 * caller's remaining time (0 once that has passed, so no attempt starts).
 */
function tighterDeadline(own: number | undefined): number | undefined {
  const left = Ambient.remaining();
  if (left === undefined || (own !== undefined && own <= left)) return own;
  return Math.max(0, left);
}

/**
 * Marks a call the drain stopped (DESIGN §3.12): stop reason `draining`, and the `draining` event
 * before the terminal one. The outcome stays the last attempt's.
 */
export function stopForDrain<T>(call: Call<T>): Step {
  call.reason = 'draining';
  if (call.plan.listener !== undefined) {
    call.emit({
      kind: 'draining',
      policy: call.plan.options.name,
      attempt: call.attempts,
      verdict: call.verdict?.kind,
      error: errorName(call.error),
      duration: call.duration,
    });
  }
  return Step.Stop;
}

/**
 * Carries on a logical call whose accepted value broke after it was accepted (a response body that
 * broke mid-way, DESIGN §5 `resumeDownloads`). The call is not counted again; attempts are numbered
 * on from `continuing.attempts`; the first attempt here is a retry after a Transient failure — the
 * drain, the backoff, the deadline, the breaker and the retry budget decide it as they decide any
 * retry, with a `retrying` event — and the deadline is the original call's. With no attempt left
 * the call ends at once (`attemptsExhausted`) with `continuing.error`.
 */
export interface CallContinuation {
  /** Attempts the call already made, an integer >= 1; the next is numbered `attempts + 1`. */
  readonly attempts: number;
  /** What broke the accepted value: the failure the retry follows (and the outcome when none is left). */
  readonly error: unknown;
  /** Clock reading (the policy's clock, ms) at which the call's deadline passes; `Infinity` for none. */
  readonly deadlineAt: number;
  /**
   * The call carried on, when its success was held (`RunOptions.hold`): the continuation is observed
   * as that call — its observer state (its span), its start — rather than as a call of its own, so
   * the logical call has one terminal event. Without it (or with nothing held) the continuation is
   * observed as a call of its own.
   */
  readonly held?: HeldCall;
}
