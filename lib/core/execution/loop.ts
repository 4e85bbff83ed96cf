import type { Verdict } from '../classification/verdict.js';
import { CallRejectedError } from '../errors.js';
import { sleep } from '../time/sleep.js';
import { type Call, REFUSAL_REASONS, Step, stopForDrain } from './call.js';
import { TIMED_OUT, admit, attemptContext, boundedAttempt, decideRetry, record, timedOut } from './phases.js';

// The executor's loop (DESIGN §3.2): the phases of phases.ts in order, awaiting only the attempt, a
// backoff or a guarded pause. `execute` (executor.ts) starts it, or a fast first attempt
// (first-attempt.ts) hands it the call it began.

/** Pause before a refusal by a guard of this process is reported (DESIGN §3.7); not configurable. */
export const GUARDED_PAUSE_MS = 100;

/**
 * Carries on in the loop from the first attempt a fast path already made: its outcome, whether this
 * call's own deadline ended it, and its verdict when the fast path already classified it. The attempt
 * started when the call did (`call.start`).
 */
export function afterFirst<T>(call: Call<T>, value: T | undefined, error: unknown, threw: boolean, deadlineHit = false, verdict?: Verdict): Promise<T> {
  call.attempts = 1;
  call.attemptStart = call.start;
  call.value = value;
  call.error = error;
  call.threw = threw;
  call.deadlineHit = deadlineHit;
  call.presetVerdict = verdict;
  return loop(call, true);
}

/**
 * The call, phase after phase: retry decision (before every attempt but the first), admission, the
 * bounded attempt, recording. `attempted` is true when the first attempt's outcome is already in `call`.
 */
export async function loop<T>(call: Call<T>, attempted: boolean): Promise<T> {
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
  // A breaker's refusal always has a hint, half-open ones included (see refusalRetryAfter).
  const retryAfter = refusal === 'BudgetExhausted' ? call.bucket!.retryAfter() : call.breaker!.refusalRetryAfter();
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
export async function settled<T>(call: Call<T>): Promise<T> {
  return call.settle();
}
