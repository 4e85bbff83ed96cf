import { Ambient } from '../ambient/ambient-context.js';
import { Admission } from '../breaker/breaker-state.js';
import type { CircuitBreaker } from '../breaker/circuit-breaker.js';
import type { RetryBudgetState } from '../budget/retry-budget-state.js';
import type { ClassifyContext } from '../classification/classifier.js';
import { Verdict } from '../classification/verdict.js';
import { AttemptTimeoutError, DeadlineExceededError } from '../errors.js';
import type { ExecutablePolicy } from '../policy/policy-options.js';
import { Attempt, type AttemptContext } from './attempt-context.js';
import { Call, type Work } from './call.js';
import { CallEvent } from './events.js';
import { ended, tell } from './observer.js';
import { afterFirst } from './loop.js';
import { UNBOUND_FIRST_ATTEMPT } from './unbound-attempt.js';

// The executor's fast first attempts (DESIGN §3.2, issue 15): the success path of attempt 1 without
// the loop's call state — no Call object, one continuation (or none when every feature is off).
// Anything but a success builds the Call then, with the outcome and the start reading taken here,
// and carries on in the loop (loop.ts), which does exactly what it would have done from the start.

const ABORTED: ClassifyContext = Object.freeze({ callerAborted: true });
const NOT_ABORTED: ClassifyContext = Object.freeze({ callerAborted: false });

/** Hands a first attempt that did not simply succeed to the loop. */
function carryOn<T>(
  policy: ExecutablePolicy,
  work: Work<T>,
  signal: AbortSignal | undefined,
  start: number | undefined,
  state: unknown,
  value: T | undefined,
  error: unknown,
  threw: boolean,
  deadlineHit = false,
  verdict?: Verdict,
): Promise<T> {
  return afterFirst(new Call(policy, work, signal, undefined, policy.options.attempts, start, undefined, state), value, error, threw, deadlineHit, verdict);
}

/**
 * Every feature off: nothing to retry, fund, time, bound or report, and no rule to classify by — the
 * work's own promise is the call's (no frame of ours). A synchronous throw or value becomes a
 * rejected or resolved promise, as an async function would make it.
 */
export function direct<T>(work: Work<T>): Promise<T> {
  let pending: T | PromiseLike<T>;
  try {
    pending = work(UNBOUND_FIRST_ATTEMPT);
  } catch (error) {
    return Promise.reject(error);
  }
  return pending instanceof Promise ? (pending as Promise<T>) : Promise.resolve(pending);
}

/**
 * Retries but nothing to time, bound or report, no caller signal: attempt 1 and one continuation. A
 * success deposits (the bucket's own pass-through, no closure per call); a failure carries on in the loop.
 */
export function firstThen<T>(policy: ExecutablePolicy, work: Work<T>, bucket: RetryBudgetState | undefined): Promise<T> {
  let pending: T | PromiseLike<T>;
  try {
    pending = work(UNBOUND_FIRST_ATTEMPT);
  } catch (error) {
    return carryOn(policy, work, undefined, undefined, undefined, undefined, error, true);
  }
  return Promise.resolve(pending).then(bucket === undefined ? undefined : bucket.passDeposit, (error: unknown) =>
    carryOn(policy, work, undefined, undefined, undefined, undefined, error, true),
  ) as Promise<T>;
}

/**
 * Nothing to time, bound or report, with the caller's signal or a classifier with rules: one attempt in
 * a small async frame. Anything but a plain success carries on in the loop from the outcome it got.
 */
export async function firstAttempt<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined): Promise<T> {
  const context = new Attempt(1, signal);
  let value: T;
  try {
    value = await work(context);
  } catch (error) {
    context.end();
    return carryOn(policy, work, signal, undefined, undefined, undefined, error, true);
  }
  context.end();
  if (!policy.options.classifier.valuesAreOk) return carryOn(policy, work, signal, undefined, undefined, value, undefined, false);
  policy.bucket()?.deposit();
  return value;
}

/**
 * A first attempt that is timed (for a closed breaker or a listener) or bounded (a deadline, an
 * attempt timeout), with no log to fill: attempt 1 and its bookkeeping in one continuation, raced
 * against the bound's timer when there is one, the loop's events in the loop's order.
 */
export function firstTimed<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined, breaker: CircuitBreaker | undefined, state: unknown): Promise<T> {
  const o = policy.options;
  const listener = o.onEvent;
  // Work done for a caller that itself retries: a retry here multiplies with the caller's (DESIGN §3.9).
  if (listener !== undefined && o.attempts > 1 && Ambient.current()?.nestedRetry === true) {
    tell(listener, new CallEvent('nestedRetry', o.name, 0, undefined, undefined, 0, 0, undefined, false, policy.dependency), state);
  }
  const start = o.clock.now();
  const untilDeadline = o.deadline === undefined ? Infinity : o.deadline;
  // When both fall due together the deadline is what ended the call.
  const byAttemptTimeout = o.attemptTimeout !== undefined && o.attemptTimeout < untilDeadline;
  const bound = byAttemptTimeout ? o.attemptTimeout! : untilDeadline;
  if (bound !== Infinity) return firstBounded(policy, work, signal, breaker, start, state, bound, untilDeadline, byAttemptTimeout);
  return signal === undefined ? firstTimedUnbound(policy, work, breaker, start, state) : firstTimedLinked(policy, work, signal, breaker, start, state);
}

/** Attempt 1 timed, nothing bounding it, no caller signal: one continuation, a small closure context. */
function firstTimedUnbound<T>(policy: ExecutablePolicy, work: Work<T>, breaker: CircuitBreaker | undefined, start: number, state: unknown): Promise<T> {
  let pending: T | PromiseLike<T>;
  try {
    pending = observed(policy, state, work, UNBOUND_FIRST_ATTEMPT);
  } catch (error) {
    return carryOn(policy, work, undefined, start, state, undefined, error, true);
  }
  return Promise.resolve(pending).then(
    (value) => firstSucceeded(policy, work, undefined, breaker, start, state, value),
    (error: unknown) => carryOn(policy, work, undefined, start, state, undefined, error, true),
  );
}

/** Attempt 1 timed, nothing bounding it, the caller's signal linked to the attempt's. */
function firstTimedLinked<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal, breaker: CircuitBreaker | undefined, start: number, state: unknown): Promise<T> {
  const context = new Attempt(1, signal);
  let pending: T | PromiseLike<T>;
  try {
    pending = observed(policy, state, work, context);
  } catch (error) {
    context.end();
    return carryOn(policy, work, signal, start, state, undefined, error, true);
  }
  return Promise.resolve(pending).then(
    (value) => {
      context.end();
      return firstSucceeded(policy, work, signal, breaker, start, state, value);
    },
    (error: unknown) => {
      context.end();
      return carryOn(policy, work, signal, start, state, undefined, error, true);
    },
  );
}

/**
 * Attempt 1 raced against its bound: whichever comes first, its outcome or the timer, which aborts the
 * attempt's signal with an `AttemptTimeoutError` or a `DeadlineExceededError` (built only when it
 * fires). The timer counts from the call's start reading; the losing attempt's outcome is ignored.
 */
function firstBounded<T>(
  policy: ExecutablePolicy,
  work: Work<T>,
  signal: AbortSignal | undefined,
  breaker: CircuitBreaker | undefined,
  start: number,
  state: unknown,
  bound: number,
  untilDeadline: number,
  byAttemptTimeout: boolean,
): Promise<T> {
  const clock = policy.options.clock;
  const context = new Attempt(1, signal, bound, untilDeadline);
  return new Promise<T>((resolve) => {
    let settled = false;
    const timer = clock.setTimer(
      bound,
      () => {
        settled = true;
        context.abort(byAttemptTimeout ? new AttemptTimeoutError(bound) : new DeadlineExceededError(policy.options.deadline!));
        context.end();
        const reason = context.reason;
        // Only this call's own timer decides that its deadline passed: a DeadlineExceededError thrown
        // by the work (a nested policy's) is an ordinary failure to classify.
        resolve(carryOn(policy, work, signal, start, state, undefined, reason, true, !byAttemptTimeout && reason instanceof DeadlineExceededError));
      },
      false,
      start,
    );
    let pending: PromiseLike<T>;
    try {
      pending = Promise.resolve(observed(policy, state, work, context));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        if (settled) return;
        clock.clearTimer(timer);
        context.end();
        resolve(firstSucceeded(policy, work, signal, breaker, start, state, value));
      },
      (error: unknown) => {
        if (settled) return;
        clock.clearTimer(timer);
        context.end();
        resolve(carryOn(policy, work, signal, start, state, undefined, error, true));
      },
    );
  });
}

/**
 * The bookkeeping of a timed attempt 1 that returned a value, in the loop's order: the classifier's
 * verdict when it has rules (anything but Ok, or a throwing rule, carries on in the loop with it), the
 * attempt event, the breaker's record, the deposit, the terminal event (its duration from the same
 * reading).
 */
function firstSucceeded<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined, breaker: CircuitBreaker | undefined, start: number, state: unknown, value: T): T | Promise<T> {
  const o = policy.options;
  if (!o.classifier.valuesAreOk) {
    let verdict: Verdict;
    try {
      verdict = o.classifier.classifyValue(value, signal?.aborted === true ? ABORTED : NOT_ABORTED);
    } catch (bug) {
      return carryOn(policy, work, signal, start, state, undefined, bug, true, false, Verdict.permanent);
    }
    if (verdict.kind !== 'Ok') return carryOn(policy, work, signal, start, state, value, undefined, false, false, verdict);
  }
  const end = o.clock.now();
  const duration = end - start;
  const listener = o.onEvent;
  if (listener !== undefined) tell(listener, new CallEvent('attempt', o.name, 1, 'Ok', undefined, duration, 0, undefined, false, policy.dependency), state);
  breaker?.record(Admission.Closed, 'Ok', duration, end);
  policy.bucket()?.deposit();
  if (listener !== undefined) ended(listener, state, new CallEvent('succeeded', o.name, 1, 'Ok', undefined, duration, 0, 'succeeded', true, policy.dependency));
  return value;
}

/** Attempt 1's work, inside the observer's `runAttempt` when it has one (a span's context). */
function observed<T>(policy: ExecutablePolicy, state: unknown, work: Work<T>, context: AttemptContext): T | PromiseLike<T> {
  const observer = policy.options.onEvent;
  return observer?.runAttempt === undefined ? work(context) : observer.runAttempt(state, work, context);
}
