import { Ambient } from '../ambient/ambient-context.js';
import { Admission } from '../breaker/breaker-state.js';
import type { ClassifyContext } from '../classification/classifier.js';
import { Verdict, isRetryable } from '../classification/verdict.js';
import { AttemptTimeoutError, DeadlineExceededError } from '../errors.js';
import { Attempt, type AttemptContext, type AttemptHandle } from './attempt-context.js';
import { BoundedAttempt } from './race.js';
import { type Call, Slot, Step, stopForDrain } from './call.js';
import { errorName } from './error-name.js';
import { type ConcurrencyLimiter, SlotOutcome } from '../limits/concurrency-limiter.js';
import type { Saturation } from '../limits/saturation.js';
import { UNBOUND_FIRST_ATTEMPT } from './unbound-attempt.js';

// The executor's rules (DESIGN §3.2), one implementation each: plain synchronous functions over one
// call's state (call.ts), called in order by the loop (loop.ts) — the opening, retry decision (not
// before the first attempt), admission, the bounded attempt, recording. Each returns a Step; the
// loop does the awaiting.

const ABORTED: ClassifyContext = Object.freeze({ callerAborted: true });
const NOT_ABORTED: ClassifyContext = Object.freeze({ callerAborted: false });

/**
 * The call's opening, before anything is attempted: a caller that already aborted ends it as
 * cancelled; a continuation with no attempt left (or run in a single-shot scope) ends at once with
 * the failure it carries on (`attemptsExhausted`); work done for a caller that itself retries is
 * reported (`nestedRetry`: a retry here multiplies with the caller's, DESIGN §3.9).
 */
export function begin<T>(call: Call<T>): Step {
  const signal = call.signal;
  if (signal?.aborted === true) return call.fail('cancelled', signal.reason);
  // Only a continuation opens with attempts already made.
  if (call.attempts > 0) {
    if (call.attempts >= call.maxAttempts || Ambient.current()?.singleShot === true) {
      call.reason = 'attemptsExhausted';
      return Step.Stop;
    }
  } else if (
    call.plan.listener !== undefined &&
    call.maxAttempts > 1 &&
    Ambient.current()?.nestedRetry === true
  ) {
    call.emit({ kind: 'nestedRetry', policy: call.plan.options.name });
  }
  return Step.Go;
}

/**
 * Retry decision, after a retryable failure: the delay first, then whether it fits the deadline,
 * then the guards — an open breaker refuses before a token is spent, then the budget. On `Go`,
 * `call.delay` holds the backoff to wait (ms) and the `retrying` event has been sent.
 */
export function decideRetry<T>(call: Call<T>): Step {
  const o = call.plan.options;
  // Shutting down: no new retry; the call ends with the failure it has.
  if (o.drain?.draining) return stopForDrain(call);
  const verdict = call.verdict!;
  const next = call.attempts + 1;
  const remaining =
    call.deadlineAt === Infinity ? Infinity : call.deadlineAt - call.plan.clock.now();
  let delay: number;
  try {
    const pushback = verdict.retryAfter;
    if (pushback !== undefined) {
      delay = Math.min(pushback, o.backoff.maximumDelay);
      call.curveOffset = next - 1;
    } else {
      const measured = call.plan.measured;
      delay = o.backoff.compute({
        attempt: next - call.curveOffset,
        verdict,
        error: call.error,
        remaining,
        signal: call.signal,
        random: o.random,
        latency:
          measured === undefined
            ? undefined
            : (quantile) => measured.quantile(call.plan.clock.now(), quantile),
      });
    }
  } catch (bug) {
    return call.fail('permanent', bug);
  }
  if (delay >= remaining) {
    // It would sleep into a deadline it cannot meet: stop now with the failure it has.
    call.reason = 'deadlineExceeded';
    return Step.Stop;
  }
  const breaker = call.plan.breaker;
  if (breaker !== undefined && breaker.retryAfter() > 0) {
    call.refusal = 'DependencyUnavailable';
    return Step.Refuse;
  }
  const bucket = call.plan.bucket;
  if (
    bucket !== undefined &&
    !bucket.tryAcquire(o.useAmbientCriticality && Ambient.criticality() === 'sheddable')
  ) {
    call.refusal = 'BudgetExhausted';
    return Step.Refuse;
  }
  // A continuation's log starts empty: the attempt that failed belongs to the call it carries on.
  const last = call.log?.attempts.at(-1);
  if (last !== undefined) last.delay = delay;
  if (call.plan.listener !== undefined) {
    call.emit({
      kind: 'retrying',
      policy: o.name,
      attempt: call.attempts,
      verdict: verdict.kind,
      error: errorName(call.error),
      duration: call.duration,
      delay,
    });
  }
  call.delay = delay;
  return Step.Go;
}

/**
 * Admission of the next attempt: is there time left, and do the guards of this process let it start
 * ({@link guard}: the limiter, the caller's quota, the breaker, in that order). On `Go` the attempt
 * is counted (against the quota too) and timed.
 */
export function admit<T>(call: Call<T>): Step {
  const next = call.attempts + 1;
  // A listener, a classifier rule or a custom backoff may abort the caller's signal between attempts;
  // with no wait in between nothing else would notice, and no attempt may start after the caller aborted.
  const signal = call.signal;
  if (signal?.aborted === true) {
    if (next > 1) call.plan.bucket?.refund();
    releaseSlot(call, 0, SlotOutcome.Ignored);
    return call.fail('cancelled', signal.reason);
  }
  // The first attempt starts when the call does (unless it queued for a slot); later ones after a wait.
  const attemptStart =
    next === 1 && call.callTimed && call.slot !== Slot.Queued
      ? call.start
      : call.callTimed || call.timed || (next > 1 && call.plan.timesRetries)
        ? call.plan.clock.now()
        : 0;
  if (attemptStart >= call.deadlineAt) {
    releaseSlot(call, 0, SlotOutcome.Ignored);
    return call.fail(
      'deadlineExceeded',
      new DeadlineExceededError(call.deadline!, { cause: call.error }),
    );
  }
  const step = guard(call, next, true);
  if (step !== Step.Go) return step;
  call.attempts = next;
  call.attemptStart = attemptStart;
  return Step.Go;
}

/**
 * The guards of this process an attempt passes, in this order: the limiter (a free slot or token;
 * when it has none, `Step.Queue` if `queue` and the caller can wait for one before its deadline, else
 * `Step.Refuse`), the caller's quota (`RunOptions.quota`, asked before the breaker so its refusal never
 * takes a half-open probe), the breaker. A refusal names its guard in `call.refusal` and gives back
 * what the attempt took: the slot, and a retry's budget token when `next` > 1. On `Go` the attempt
 * holds its slot, `call.admission` is the breaker's answer and the quota is spent. Every attempt's
 * admission (`admit`, a hedge's start) asks here.
 * @param next the number of the attempt being admitted (1 for the first)
 * @param queue whether the attempt may wait for a slot (a hedge never does)
 */
export function guard<T>(call: Call<T>, next: number, queue: boolean): Step {
  // The limiter first: a queued caller is admitted by the breaker when its slot comes, not before.
  const limiter = call.plan.limiter;
  if (limiter !== undefined && call.slot === Slot.None) {
    if (!limiter.tryAcquire()) {
      if (queue && limiter.canWaitUntil(call.deadlineAt)) return Step.Queue;
      if (next > 1) call.plan.bucket?.refund();
      call.refusal = 'Limited';
      return Step.Refuse;
    }
    call.slot = Slot.Held;
    if (call.plan.slotPerCall) (limiter as ConcurrencyLimiter).heldBy(call);
  } else if (call.slot === Slot.Queued && call.plan.slotPerCall) {
    (limiter as ConcurrencyLimiter).heldBy(call);
  }
  const quota = call.quota;
  if (quota !== undefined && quota.refusal(call.plan.clock.now()) !== undefined) {
    if (next > 1) call.plan.bucket?.refund();
    releaseSlot(call, 0, SlotOutcome.Ignored);
    call.refusal = 'QuotaExhausted';
    return Step.Refuse;
  }
  const breaker = call.plan.breaker;
  if (breaker !== undefined) {
    const admission = breaker.admit();
    if (admission === Admission.Refused) {
      // The retry never reaches the dependency: the token it spent goes back, and the slot it took.
      if (next > 1) call.plan.bucket?.refund();
      releaseSlot(call, 0, SlotOutcome.Ignored);
      call.refusal = 'DependencyUnavailable';
      return Step.Refuse;
    }
    call.admission = admission;
  }
  if (call.slot === Slot.Queued) call.slot = Slot.Held;
  quota?.spend();
  return Step.Go;
}

/** Tells the policy's measurements how the attempt went (its duration is `call.duration`). */
function recordMeasured<T>(call: Call<T>, learn: boolean): void {
  const measured = call.plan.measured!;
  const settings = call.plan.ceiling;
  const end = call.attemptStart + call.duration;
  measured.record(
    end,
    call.duration,
    call.verdict!.kind === 'Ok',
    learn,
    settings === undefined
      ? undefined
      : measured.ceiling(end, settings.multiple, settings.quantile),
  );
}

/** Gives the call's limiter slot back, when it holds one. */
export function releaseSlot<T>(call: Call<T>, heldFor: number, outcome: SlotOutcome): void {
  if (call.slot === Slot.None) return;
  call.slot = Slot.None;
  if (call.plan.slotPerCall) (call.plan.limiter as ConcurrencyLimiter).releaseHeld(call, outcome);
  else call.plan.limiter!.release(heldFor, outcome);
}

/**
 * The bounded attempt's set-up: its bound (the lower of `attemptTimeout` and the time left on the
 * deadline; when both fall due together the deadline is what ended the call), its context, and a
 * clean outcome for it to fill. A first attempt nothing can abort (no caller signal, no bound) gets
 * the shared context of unbound first attempts: the success path allocates none.
 */
export function attemptContext<T>(call: Call<T>): AttemptHandle {
  const o = call.plan.options;
  const untilDeadline = call.deadlineAt - call.attemptStart;
  const byAttemptTimeout = o.attemptTimeout !== undefined && o.attemptTimeout < untilDeadline;
  const bound = byAttemptTimeout ? o.attemptTimeout! : untilDeadline;
  if (call.plan.ceiling !== undefined) return ceiledContext(call, bound, untilDeadline);
  call.clearOutcome(byAttemptTimeout);
  if (bound === Infinity)
    return call.signal === undefined && call.attempts === 1
      ? UNBOUND_FIRST_ATTEMPT
      : new Attempt(call.attempts, call.signal);
  return new BoundedAttempt(call.attempts, call.signal, bound, untilDeadline);
}

/**
 * {@link attemptContext} under an attempt ceiling: the measured ceiling only ever tightens the
 * bound; an attempt it cuts timed out (`AttemptTimeoutError`).
 */
function ceiledContext<T>(call: Call<T>, bound: number, untilDeadline: number): AttemptHandle {
  const measured = call.plan.measured!;
  const settings = call.plan.ceiling!;
  const ceiling = measured.standsAside
    ? undefined
    : measured.ceiling(call.attemptStart, settings.multiple, settings.quantile);
  const cut = ceiling !== undefined && ceiling < bound;
  const o = call.plan.options;
  call.clearOutcome(cut || (o.attemptTimeout !== undefined && o.attemptTimeout < untilDeadline));
  const bounded = cut ? ceiling : bound;
  if (bounded === Infinity)
    return call.signal === undefined && call.attempts === 1
      ? UNBOUND_FIRST_ATTEMPT
      : new Attempt(call.attempts, call.signal);
  return new BoundedAttempt(call.attempts, call.signal, bounded, untilDeadline);
}

/**
 * Runs the attempt's work, inside the observer's `runAttempt` when it has one (a span's context).
 * A bounded attempt's timer is armed first ({@link boundedAttempt}).
 */
export function attemptWork<T>(call: Call<T>, context: AttemptContext): T | PromiseLike<T> {
  const observer = call.plan.listener;
  return observer?.runAttempt === undefined
    ? call.work(context)
    : observer.runAttempt(call.state, call.work, context);
}

/**
 * Arms a bounded attempt's timer: `passed` runs when the bound passes before the work settles. The
 * timer counts from the attempt's start reading when the call has one.
 */
export function boundedAttempt<T>(
  call: Call<T>,
  context: BoundedAttempt,
  passed: () => void,
): void {
  context.timer = call.plan.clock.setTimer(
    context.bound,
    passed,
    false,
    call.callTimed ? call.attemptStart : undefined,
  );
}

/**
 * The attempt's bound passed first: its signal is aborted with an `AttemptTimeoutError` or a
 * `DeadlineExceededError` (built only now: capturing a stack costs microseconds), which is the
 * attempt's outcome.
 */
export function timedOut<T>(call: Call<T>, context: AttemptHandle): void {
  context.abort(
    call.byAttemptTimeout
      ? new AttemptTimeoutError(context.bound)
      : new DeadlineExceededError(call.deadline!),
  );
  call.threw = true;
  call.error = context.reason;
  // Only this call's own timer decides that its deadline passed: a DeadlineExceededError thrown by
  // the work (a nested policy's) is an ordinary failure to classify.
  call.deadlineHit = !call.byAttemptTimeout && call.error instanceof DeadlineExceededError;
}

/**
 * Recording, after every attempt: the verdict, the log, the `attempt` event, the breaker's sample,
 * the budget's record of the outcome (a deposit on Ok); then whether the call stops (success, caller abort, deadline, a verdict that
 * is not retried, a request that is not safe to repeat, attempts used up, a single-shot scope) or
 * goes on to the retry decision.
 */
/** Whether the loop is saturated; the first attempt recorded in an episode reports `saturationDetected` (the delay, ms, as its duration). */
function saturatedNow<T>(call: Call<T>, saturation: Saturation): boolean {
  if (!saturation.saturated) return false;
  if (saturation.claimEpisode() && call.plan.listener !== undefined)
    call.emit({
      kind: 'saturationDetected',
      policy: call.plan.options.name,
      attempt: call.attempts,
      duration: saturation.probe.delay,
    });
  return true;
}

/** The context a rule is handed: the frozen ones when the caller gave no facts (nothing allocated). */
function classifyContext<T>(call: Call<T>, callerAborted: boolean): ClassifyContext {
  const facts = call.facts;
  return facts === undefined ? (callerAborted ? ABORTED : NOT_ABORTED) : { callerAborted, facts };
}

export function record<T>(call: Call<T>): Step {
  const o = call.plan.options;
  const signal = call.signal;
  const callerAborted = signal?.aborted === true;
  let verdict: Verdict;
  try {
    verdict = call.deadlineHit
      ? Verdict.transient
      : call.threw
        ? o.classifier.classifyError(call.error, classifyContext(call, callerAborted))
        : o.classifier.classifyValue(call.value, classifyContext(call, callerAborted));
  } catch (bug) {
    // A throwing classifier rule ends the call with its error, after the breaker and the events
    // have been told: a probe slot must never stay held by a bug in a rule.
    verdict = Verdict.permanent;
    call.threw = true;
    call.error = bug;
  }
  const timed = call.timed || (call.attempts > 1 && call.plan.timesRetries);
  const attemptEnd = timed ? call.plan.clock.now() : 0;
  const duration = timed ? attemptEnd - call.attemptStart : 0;
  const n = call.attempts;
  call.verdict = verdict;
  call.duration = duration;
  if (call.log !== undefined)
    call.log.attempts.push({
      attempt: n,
      verdict: verdict.kind,
      duration,
      error: call.error,
      delay: 0,
    });
  if (call.plan.listener !== undefined)
    call.emit({
      kind: 'attempt',
      policy: o.name,
      attempt: n,
      verdict: verdict.kind,
      error: errorName(call.error),
      duration,
    });
  // While the event loop is saturated, durations are the loop's: the breaker's latency terms learn nothing.
  const timely = o.saturation === undefined || !saturatedNow(call, o.saturation);
  call.plan.breaker?.record(call.admission, verdict.kind, duration, attemptEnd, timely, call.error);
  // Attempt timeouts and failures worth retrying are drops (signs of load); answers are latency samples.
  // A slot held per call is given back when the call settles (Call.settle).
  if (call.slot !== Slot.None && !call.plan.slotPerCall)
    releaseSlot(
      call,
      duration,
      callerAborted || verdict.kind === 'Permanent' || verdict.kind === 'Limited'
        ? SlotOutcome.Ignored
        : verdict.kind === 'Ok'
          ? SlotOutcome.Answered
          : SlotOutcome.Dropped,
    );
  // The budget's one hook: every attempt's outcome (a token bucket deposits on Ok).
  call.plan.bucket?.recordAttempt(n, verdict, duration, call.threw ? call.error : undefined);
  // Caller aborts and Limited refusals say nothing of the dependency's latency.
  if (call.plan.measured !== undefined && !callerAborted && verdict.kind !== 'Limited')
    recordMeasured(call, timely);

  if (verdict.kind === 'Ok') {
    call.reason = 'succeeded';
    return Step.Stop;
  }
  if (callerAborted) return call.fail('cancelled', signal!.reason);
  if (call.deadlineHit) {
    call.reason = 'deadlineExceeded';
    return Step.Stop;
  }
  if (isRetryable(verdict) && n < call.maxAttempts && Ambient.current()?.singleShot !== true)
    return Step.Go;
  // A verdict marked final (a request that is not safe to repeat) names its own reason only when an
  // attempt was left: that is what stopped the call, not the attempt count.
  call.reason =
    verdict.kind === 'Limited'
      ? 'limited'
      : verdict.kind === 'Permanent'
        ? 'permanent'
        : verdict.final === true && n < call.maxAttempts
          ? 'notRepeatable'
          : 'attemptsExhausted';
  return Step.Stop;
}
