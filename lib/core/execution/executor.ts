import { Ambient } from '../ambient/ambient-context.js';
import { Verdict } from '../classification/verdict.js';
import type { ExecutablePolicy } from '../policy/policy-options.js';
import { Call, type Work } from './call.js';
import type { HeldCall } from './held-call.js';
import type { CallLog } from './call-result.js';
import { direct, firstAttempt, firstThen, firstTimed } from './first-attempt.js';
import { loop, settled } from './loop.js';
import { started } from './observer.js';

export type { Work } from './call.js';
export { GUARDED_PAUSE_MS } from './loop.js';

/**
 * Runs `work` under `policy`: the one flat loop of admission, deadline checks, attempts,
 * classification, budget, backoff and events (DESIGN §3.2). Resolves with the value of an Ok attempt
 * (or the last value a classifier rejected, once retries are over) and rejects with the final error.
 * When `log` is given, it is filled with the stop reason, attempts and duration; `attempts` caps this
 * call's total below the policy's (a caller that must not repeat a request passes 1).
 *
 * The success path of attempt 1 takes the cheapest way that does all a policy asks (first-attempt.ts):
 * every feature off — the work's own promise; retries and a budget — one continuation; a breaker, a
 * deadline, an attempt timeout or a listener — one continuation, raced against the bound's timer when
 * there is one. A log, an ambient deadline, a cap on attempts, a breaker that is not closed or a
 * zero deadline go through the loop from the start.
 */
export function execute<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined, log: CallLog | undefined, attempts?: number, continuing?: CallContinuation, hold?: HeldCall): Promise<T> {
  if (continuing !== undefined) return carryOn(policy, work, signal, log, attempts, continuing, hold);
  const o = policy.options;
  const capped = attempts !== undefined && attempts < o.attempts;
  // The budget's denominator counts logical calls, once each (a token bucket ignores it).
  policy.bucket()?.recordCall();
  const observer = o.onEvent;
  // The call starts for its observer before anything else is decided (a span opens here).
  const state = observer === undefined ? undefined : started(observer, policy);
  if (log === undefined && hold === undefined && !o.useAmbientDeadline && !capped && signal?.aborted !== true) {
    const breaker = policy.breaker();
    if (observer === undefined && o.deadline === undefined && o.attemptTimeout === undefined && breaker === undefined) {
      if (signal !== undefined || !o.classifier.valuesAreOk) return firstAttempt(policy, work, signal);
      const bucket = policy.bucket();
      return o.attempts === 1 && bucket === undefined ? direct(work) : firstThen(policy, work, bucket);
    }
    // A closed breaker admits without a decision to undo; a zero deadline is the loop's to refuse.
    if ((breaker === undefined || breaker.closed) && !(o.deadline! <= 0)) return firstTimed(policy, work, signal, breaker, state);
  }
  const call = new Call(policy, work, signal, log, capped ? attempts : o.attempts, undefined, undefined, state, hold);
  if (signal?.aborted) {
    call.fail('cancelled', signal.reason);
    return settled(call);
  }
  // Work done for a caller that itself retries: a retry here multiplies with the caller's (DESIGN §3.9).
  if (call.listener !== undefined && call.maxAttempts > 1 && Ambient.current()?.nestedRetry === true) {
    call.emit({ kind: 'nestedRetry', policy: o.name });
  }
  return loop(call, false);
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

function carryOn<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined, log: CallLog | undefined, attempts: number | undefined, continuing: CallContinuation, hold: HeldCall | undefined): Promise<T> {
  const o = policy.options;
  // Observed as the held call it carries on (its span, its start), else as a call of its own.
  const carried = continuing.held?.carry();
  const state = carried !== undefined ? carried.state : o.onEvent === undefined ? undefined : started(o.onEvent, policy);
  const call = new Call(policy, work, signal, log, attempts !== undefined && attempts < o.attempts ? attempts : o.attempts, carried?.start, continuing.deadlineAt, state, hold);
  call.attempts = continuing.attempts;
  call.verdict = Verdict.transient;
  call.error = continuing.error;
  call.threw = true;
  if (signal?.aborted) call.fail('cancelled', signal.reason);
  else if (call.attempts >= call.maxAttempts || Ambient.current()?.singleShot === true) call.reason = 'attemptsExhausted';
  else return loop(call, false);
  return settled(call);
}
