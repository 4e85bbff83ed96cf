import { Ambient } from '../ambient/ambient-context.js';
import { CallRejectedError } from '../errors.js';
import type { ExecutablePolicy } from '../policy/policy-options.js';
import { sleep } from '../time/sleep.js';
import { Attempt } from './attempt-context.js';
import { Call, REFUSAL_REASONS, Step, type Work, stopForDrain } from './call.js';
import type { CallLog } from './call-result.js';
import { TIMED_OUT, admit, attemptContext, boundedAttempt, decideRetry, record, timedOut } from './phases.js';

export type { Work } from './call.js';

/** Pause before a refusal by a guard of this process is reported (DESIGN §3.7); not configurable. */
export const GUARDED_PAUSE_MS = 100;

/**
 * Runs `work` under `policy`: the one flat loop of admission, deadline checks, attempts,
 * classification, budget, backoff and events (DESIGN §3.2). Resolves with the value of an Ok attempt
 * (or the last value a classifier rejected, once retries are over) and rejects with the final error.
 * When `log` is given, it is filled with the stop reason, attempts and duration; `attempts` caps this
 * call's total below the policy's (a caller that must not repeat a request passes 1).
 */
export function execute<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined, log: CallLog | undefined, attempts?: number): Promise<T> {
  const o = policy.options;
  const capped = attempts !== undefined && attempts < o.attempts;
  // The budget's denominator counts logical calls, once each (a token bucket ignores it).
  policy.bucket()?.recordCall();
  // Nothing to time, bound or report: the first attempt runs in a small frame of its own.
  if (
    log === undefined &&
    o.onEvent === undefined &&
    o.deadline === undefined &&
    o.attemptTimeout === undefined &&
    !o.useAmbientDeadline &&
    !capped &&
    policy.breaker() === undefined &&
    signal?.aborted !== true
  ) {
    return firstAttempt(policy, work, signal);
  }
  const call = new Call(policy, work, signal, log, capped ? attempts : o.attempts);
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
 * The success path of a policy with nothing to time, bound or report: one attempt in a small async
 * frame, with no call state. Anything but a plain success carries on in the loop from the outcome it got.
 */
async function firstAttempt<T>(policy: ExecutablePolicy, work: Work<T>, signal: AbortSignal | undefined): Promise<T> {
  const context = new Attempt(1, signal);
  let value: T;
  try {
    value = await work(context);
  } catch (error) {
    context.end();
    return afterFirst(new Call(policy, work, signal, undefined, policy.options.attempts), undefined, error, true);
  }
  context.end();
  if (!policy.options.classifier.valuesAreOk) return afterFirst(new Call(policy, work, signal, undefined, policy.options.attempts), value, undefined, false);
  policy.bucket()?.deposit();
  return value;
}

/** Carries on in the loop from the first attempt {@link firstAttempt} already made. */
function afterFirst<T>(call: Call<T>, value: T | undefined, error: unknown, threw: boolean): Promise<T> {
  call.attempts = 1;
  call.value = value;
  call.error = error;
  call.threw = threw;
  return loop(call, true);
}

/**
 * The call, phase after phase: retry decision (before every attempt but the first), admission, the
 * bounded attempt, recording. `attempted` is true when the first attempt's outcome is already in `call`.
 */
async function loop<T>(call: Call<T>, attempted: boolean): Promise<T> {
  for (;;) {
    if (!attempted) {
      if (call.attempts > 0) {
        const decision = decideRetry(call);
        if (decision === Step.Refuse) return refuse(call);
        if (decision === Step.Stop) return call.settle();
        if (call.delay > 0) {
          let cut: boolean;
          try {
            cut = await sleep(call.clock, call.delay, call.signal, call.options.drain);
          } catch (reason) {
            call.fail('cancelled', reason);
            return call.settle();
          }
          if (cut) {
            // The retry decided before the drain never happens: its token goes back.
            call.bucket?.refund();
            return drained(call);
          }
        }
      }
      const admission = admit(call);
      if (admission === Step.Refuse) return refuse(call);
      if (admission === Step.Stop) return call.settle();
      const context = attemptContext(call);
      try {
        const result = await boundedAttempt(call, context);
        if (result === TIMED_OUT) timedOut(call, context);
        else call.value = result as T;
      } catch (thrown) {
        call.threw = true;
        call.error = thrown;
      } finally {
        context.end();
      }
    }
    attempted = false;
    if (record(call) === Step.Stop) return call.settle();
  }
}

/**
 * The one refusal path, for every guard of this process: the guarded pause, then the error with its
 * hint computed after the pause (the bucket has refilled, the break has run on). The caller's abort
 * during the pause ends the call as cancelled.
 */
async function refuse<T>(call: Call<T>): Promise<T> {
  const refusal = call.refusal!;
  let cut: boolean;
  try {
    cut = await guardedPause(call);
  } catch (reason) {
    call.fail('cancelled', reason);
    return call.settle();
  }
  // Drained during the pause, a call that already failed ends with that failure now; one that made
  // no attempt is refused at once.
  if (cut && call.attempts > 0) {
    call.refusal = undefined;
    return drained(call);
  }
  // A half-open breaker whose probe slot is taken has no break left to report: when a slot frees is
  // unknown, and `Retry-After: 0` would invite an immediate retry, so no hint is given.
  const retryAfter = refusal === 'BudgetExhausted' ? call.bucket!.retryAfter() : call.breaker!.retryAfter() || undefined;
  call.fail(REFUSAL_REASONS[refusal], new CallRejectedError(refusal, retryAfter, { cause: call.error, policy: call.options.name || undefined }));
  return call.settle();
}

/**
 * The guarded rejection pause: 100 ms, cut short by the deadline, aborted at once by the caller,
 * ended at once by a drain (then `true`).
 */
function guardedPause<T>(call: Call<T>): Promise<boolean> {
  const pause = Math.min(GUARDED_PAUSE_MS, Math.max(0, call.deadlineAt - call.clock.now()));
  return sleep(call.clock, pause, call.signal, call.options.drain);
}

/** Ends a call the drain stopped, with the outcome it already had. */
function drained<T>(call: Call<T>): T {
  stopForDrain(call);
  return call.settle();
}

/** A call that ended before its first attempt, as the promise `execute` returns. */
async function settled<T>(call: Call<T>): Promise<T> {
  return call.settle();
}
