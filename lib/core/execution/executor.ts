import { Ambient } from '../ambient/ambient-context.js';
import { Attempt, type AttemptContext } from './attempt-context.js';
import { Admission } from '../breaker/breaker-state.js';
import type { CallLog } from './call-result.js';
import type { ClassifyContext } from '../classification/classifier.js';
import type { Clock } from '../time/clock.js';
import { AttemptTimeoutError, CallRejectedError, DeadlineExceededError } from '../errors.js';
import { CallEvent, type CallEventKind, type StopReason } from './events.js';
import type { ExecutablePolicy, ResolvedPolicyOptions } from '../policy/policy-options.js';
import { sleep } from '../time/sleep.js';
import { Verdict, isRetryable } from '../classification/verdict.js';

/** Pause before a refusal by a guard of this process is reported (DESIGN §3.7); not configurable. */
export const GUARDED_PAUSE_MS = 100;

/** The function a policy protects. */
export type Work<T> = (context: AttemptContext) => T | PromiseLike<T>;

const TIMED_OUT = Symbol('timedOut');
const ABORTED: ClassifyContext = Object.freeze({ callerAborted: true });
const NOT_ABORTED: ClassifyContext = Object.freeze({ callerAborted: false });

/** A first attempt already made by {@link firstAttempt}, handed to the loop to continue from. */
interface FirstOutcome<T> {
  readonly failed: boolean;
  readonly value: T | undefined;
  readonly error: unknown;
}

/**
 * Runs `work` under `policy`: the one flat loop of admission, deadline checks, attempts,
 * classification, budget, backoff and events (DESIGN §3.2). Resolves with the value of an Ok attempt
 * (or the last value a classifier rejected, once retries are over) and rejects with the final error.
 * When `log` is given, it is filled with the stop reason, attempts and duration.
 */
export function execute<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined, log: CallLog | undefined, attempts?: number): Promise<T> {
  const o = policy.options;
  if (attempts !== undefined && attempts < o.attempts) return loop(policy, work, signal, log, undefined, attempts);
  // Nothing to time, bound or report: the first attempt runs in a small frame of its own.
  if (
    log === undefined &&
    o.onEvent === undefined &&
    o.deadline === undefined &&
    o.attemptTimeout === undefined &&
    !o.useAmbientDeadline &&
    policy.breaker() === undefined &&
    signal?.aborted !== true
  ) {
    return firstAttempt(policy, work, signal);
  }
  return loop(policy, work, signal, log, undefined, o.attempts);
}

/**
 * The success path of a policy with nothing to time, bound or report: one attempt in a small async
 * frame (the loop's frame holds every local of every feature). Anything but a plain success carries
 * on in the loop from the outcome it got.
 */
async function firstAttempt<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined): Promise<T> {
  const context = new Attempt(1, signal);
  let value: T;
  try {
    value = await work(context);
  } catch (error) {
    context.end();
    return loop(policy, work, signal, undefined, { failed: true, value: undefined, error }, policy.options.attempts);
  }
  context.end();
  if (!policy.options.classifier.valuesAreOk) return loop(policy, work, signal, undefined, { failed: false, value, error: undefined }, policy.options.attempts);
  policy.bucket()?.deposit();
  return value;
}

/**
 * The whole call: retry decisions, admission, bounded attempts, classification, budget, breaker and
 * events. Starts from `first` when the fast path already made attempt 1. `attempts` is this call's
 * total (the policy's, or fewer when the caller capped it).
 */
async function loop<T>(
  policy: ExecutablePolicy,
  work: Work<T>,
  signal: AbortSignal | undefined,
  log: CallLog | undefined,
  first: FirstOutcome<T> | undefined,
  attempts: number,
): Promise<T> {
  const o = policy.options;
  const clock = o.clock;
  const listener = o.onEvent;
  const breaker = policy.breaker();
  const deadline = o.useAmbientDeadline ? tighterDeadline(o.deadline) : o.deadline;
  // Clock reads cost ~50 ns each: read the call's start only when something reports or bounds the
  // call, and time attempts only when a report or the breaker needs their durations.
  const reported = listener !== undefined || log !== undefined;
  const callTimed = reported || deadline !== undefined;
  const timed = reported || breaker !== undefined;
  const start = callTimed ? clock.now() : 0;
  const deadlineAt = deadline === undefined ? Infinity : start + deadline;

  if (signal?.aborted) {
    finish(o, log, start, 'failed', 'cancelled', 0, undefined, signal.reason);
    throw signal.reason;
  }

  // Work done for a caller that itself retries: a retry here multiplies with the caller's (DESIGN §3.9).
  if (listener !== undefined && o.attempts > 1 && Ambient.current()?.nestedRetry === true) {
    emit(listener, new CallEvent('nestedRetry', o.name, 0, undefined, undefined, 0, 0, undefined, false));
  }

  let lastVerdict: Verdict | undefined;
  let lastError: unknown;
  let lastValue: T | undefined;
  let lastDuration = 0;
  let threw = false;
  // After a server pushback the computed curve starts again from the first retry's delay (gRFC A6).
  let curveOffset = 0;

  for (let n = 1; ; n++) {
    if (n > 1) {
      // Decide the retry: delay first, then whether it fits the deadline, then the budget.
      const remaining = deadlineAt - clock.now();
      const pushback = lastVerdict!.retryAfter;
      let delay: number;
      try {
        if (pushback !== undefined) {
          delay = Math.min(pushback, o.backoff.maximumDelay);
          curveOffset = n - 1;
        } else {
          delay = o.backoff.compute({ attempt: n - curveOffset, verdict: lastVerdict!, error: lastError, remaining, signal, random: o.random });
        }
      } catch (bug) {
        finish(o, log, start, 'failed', 'permanent', n - 1, lastVerdict, bug);
        throw bug;
      }
      if (delay >= remaining) {
        // It would sleep into a deadline it cannot meet: stop now with the failure it has.
        finish(o, log, start, 'failed', 'deadlineExceeded', n - 1, lastVerdict, lastError);
        if (threw) throw lastError;
        return lastValue as T;
      }
      // An open breaker refuses the retry before it spends a token or announces itself.
      const bucket = policy.bucket();
      const refusal = breaker !== undefined && breaker.retryAfter() > 0 ? 'DependencyUnavailable' : bucket !== undefined && !bucket.tryAcquire() ? 'BudgetExhausted' : undefined;
      if (refusal !== undefined) {
        const error = await refuse(refusal, policy, clock, deadlineAt, signal, threw ? lastError : undefined).catch((reason: unknown) => {
          finish(o, log, start, 'failed', 'cancelled', n - 1, lastVerdict, reason);
          throw reason;
        });
        finish(o, log, start, 'rejected', refusal === 'BudgetExhausted' ? 'budgetExhausted' : 'dependencyUnavailable', n - 1, lastVerdict, error);
        throw error;
      }
      if (log !== undefined) log.attempts[log.attempts.length - 1]!.delay = delay;
      if (listener !== undefined) {
        emit(listener, new CallEvent('retrying', o.name, n - 1, lastVerdict!.kind, errorName(threw ? lastError : undefined), lastDuration, delay, undefined, false));
      }
      if (delay > 0) {
        try {
          await sleep(clock, delay, signal);
        } catch (reason) {
          finish(o, log, start, 'failed', 'cancelled', n - 1, lastVerdict, reason);
          throw reason;
        }
      }
    }

    // The first attempt starts when the call does; later ones after a wait.
    const attemptStart = n === 1 && callTimed ? start : callTimed || timed ? clock.now() : 0;
    if (attemptStart >= deadlineAt) {
      const error = new DeadlineExceededError(deadline!, { cause: threw ? lastError : undefined });
      finish(o, log, start, 'failed', 'deadlineExceeded', n - 1, lastVerdict, error);
      throw error;
    }

    let admission: Admission = Admission.Closed;
    let value: T | undefined;
    let error: unknown;
    let failed = false;
    let deadlineHit = false;
    if (first !== undefined && n === 1) {
      ({ value, error, failed } = first);
    } else {
      if (breaker !== undefined) {
        admission = breaker.admit();
        if (admission === Admission.Refused) {
          // The retry never reaches the dependency: the token it spent goes back.
          if (n > 1) policy.bucket()?.refund();
          const error = await refuse('DependencyUnavailable', policy, clock, deadlineAt, signal, threw ? lastError : undefined).catch((reason: unknown) => {
            finish(o, log, start, 'failed', 'cancelled', n - 1, lastVerdict, reason);
            throw reason;
          });
          finish(o, log, start, 'rejected', 'dependencyUnavailable', n - 1, lastVerdict, error);
          throw error;
        }
      }

      const untilDeadline = deadlineAt - attemptStart;
      // When both fall due together the deadline is what ended the call.
      const byAttemptTimeout = o.attemptTimeout !== undefined && o.attemptTimeout < untilDeadline;
      const bound = byAttemptTimeout ? o.attemptTimeout! : untilDeadline;
      const context = new Attempt(n, signal, bound, untilDeadline);
      try {
        if (bound === Infinity) {
          value = await work(context);
        } else {
          const result = await raceBound(clock, work, context, bound, byAttemptTimeout ? 0 : deadline!, callTimed ? attemptStart : undefined);
          if (result === TIMED_OUT) {
            // Only this call's own timer decides that its deadline passed: a DeadlineExceededError
            // thrown by the work (a nested policy's) is an ordinary failure to classify.
            failed = true;
            error = context.reason;
            deadlineHit = !byAttemptTimeout && error instanceof DeadlineExceededError;
          } else value = result as T;
        }
      } catch (thrown) {
        failed = true;
        error = thrown;
      } finally {
        context.end();
      }
    }

    const callerAborted = signal?.aborted === true;
    let verdict: Verdict;
    try {
      verdict = deadlineHit
        ? Verdict.transient
        : failed
          ? o.classifier.classifyError(error, callerAborted ? ABORTED : NOT_ABORTED)
          : o.classifier.classifyValue(value, callerAborted ? ABORTED : NOT_ABORTED);
    } catch (bug) {
      // A throwing classifier rule ends the call with its error, after the breaker and the events
      // have been told: a probe slot must never stay held by a bug in a rule.
      verdict = Verdict.permanent;
      failed = true;
      error = bug;
    }
    const attemptEnd = timed ? clock.now() : 0;
    const duration = attemptEnd - attemptStart;
    threw = failed;
    lastError = error;
    lastValue = value;
    lastVerdict = verdict;
    lastDuration = duration;
    if (log !== undefined) log.attempts.push({ attempt: n, verdict: verdict.kind, duration, error, delay: 0 });
    if (listener !== undefined) {
      emit(listener, new CallEvent('attempt', o.name, n, verdict.kind, errorName(error), duration, 0, undefined, false));
    }
    breaker?.record(admission, verdict.kind, duration, attemptEnd);

    if (verdict.kind === 'Ok') {
      policy.bucket()?.deposit();
      if (reported) finish(o, log, start, 'succeeded', 'succeeded', n, verdict, undefined);
      return value as T;
    }
    if (callerAborted) {
      finish(o, log, start, 'failed', 'cancelled', n, verdict, signal!.reason);
      throw signal!.reason;
    }
    if (deadlineHit) {
      finish(o, log, start, 'failed', 'deadlineExceeded', n, verdict, error);
      throw error;
    }
    if (!isRetryable(verdict) || n >= attempts || Ambient.current()?.singleShot === true) {
      const reason: StopReason = verdict.kind === 'Limited' ? 'limited' : verdict.kind === 'Permanent' ? 'permanent' : 'attemptsExhausted';
      finish(o, log, start, 'failed', reason, n, verdict, error);
      if (failed) throw error;
      return value as T;
    }
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

/** Ends the call's bookkeeping: the log's reason and duration, and the one terminal event. */
function finish(o: ResolvedPolicyOptions, log: CallLog | undefined, start: number, kind: CallEventKind, reason: StopReason, attempt: number, verdict: Verdict | undefined, error: unknown): void {
  const duration = o.clock.now() - start;
  if (log !== undefined) {
    log.reason = reason;
    log.duration = duration;
  }
  const listener = o.onEvent;
  if (listener !== undefined) {
    emit(listener, new CallEvent(kind, o.name, attempt, verdict?.kind, errorName(error), duration, 0, reason, true));
  }
}

/**
 * Runs one attempt against a bound: whichever comes first, its outcome or the timer, which aborts the
 * attempt's signal with an `AttemptTimeoutError` (`deadline` 0) or a `DeadlineExceededError`. The error
 * is built only when the timer fires: capturing a stack costs microseconds. The losing attempt's
 * rejection is observed, never unhandled. `now` is the attempt's start reading when the call has one,
 * so the timer costs no second clock read.
 */
function raceBound<T>(clock: Clock, work: Work<T>, context: Attempt, bound: number, deadline: number, now: number | undefined): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const timer = clock.setTimer(
      bound,
      () => {
        context.abort(deadline === 0 ? new AttemptTimeoutError(bound) : new DeadlineExceededError(deadline));
        resolve(TIMED_OUT);
      },
      false,
      now,
    );
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(work(context));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        clock.clearTimer(timer);
        resolve(value);
      },
      (error) => {
        clock.clearTimer(timer);
        reject(error);
      },
    );
  });
}

/**
 * A refusal by a guard of this process: the guarded pause, then the error with its hint computed
 * after the pause (the bucket has refilled, the break has run on). Rejects with the caller's reason
 * if the caller aborts during the pause.
 */
async function refuse(
  reason: 'BudgetExhausted' | 'DependencyUnavailable',
  policy: ExecutablePolicy,
  clock: Clock,
  deadlineAt: number,
  signal: AbortSignal | undefined,
  cause: unknown,
): Promise<CallRejectedError> {
  await guardedPause(clock, deadlineAt, signal);
  // A half-open breaker whose probe slot is taken has no break left to report: when a slot frees is
  // unknown, and `Retry-After: 0` would invite an immediate retry, so no hint is given.
  const retryAfter = reason === 'BudgetExhausted' ? policy.bucket()!.retryAfter() : policy.breaker()!.retryAfter() || undefined;
  return new CallRejectedError(reason, retryAfter, { cause, policy: policy.options.name || undefined });
}

/** The guarded rejection pause: 100 ms, cut short by the deadline, aborted at once by the caller. */
function guardedPause(clock: Clock, deadlineAt: number, signal: AbortSignal | undefined): Promise<void> {
  const pause = Math.min(GUARDED_PAUSE_MS, Math.max(0, deadlineAt - clock.now()));
  return sleep(clock, pause, signal);
}

function emit(listener: (event: CallEvent) => void, event: CallEvent): void {
  try {
    listener(event);
  } catch {
    // A listener must never change the call's outcome (DESIGN §3.12).
  }
}

function errorName(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (error instanceof Error) return error.name;
  return typeof error;
}
