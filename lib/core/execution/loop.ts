import { CallRejectedError, DeadlineExceededError } from '../errors.js';
import { QueueExit } from '../limits/limit-queue.js';
import { sleep } from '../time/sleep.js';
import { streamHead } from '../streams/stream-head.js';
import { isStreamSource } from '../streams/stream-source.js';
import { type Call, REFUSAL_REASONS, Slot, Step, stopForDrain } from './call.js';
import type { AttemptHandle } from './attempt-context.js';
import { race } from './hedging.js';
import {
  admit,
  attemptContext,
  attemptWork,
  begin,
  boundedAttempt,
  decideRetry,
  record,
  timedOut,
} from './phases.js';
import { BoundedAttempt, raceOutcome } from './race.js';

// The executor's loop (DESIGN §3.2): the rules of phases.ts in order, waiting only for the attempt, a
// backoff or a guarded pause. Every call `execute` (executor.ts) does not hand straight to the work
// runs here, from its opening to its one settling; a first attempt that succeeds runs the same
// rules as any other, just fewer of them (no retry decision, no wait but the attempt's).
//
// Written as continuations rather than one async function: an async frame and its await cost a
// call ~400 bytes, the attempt's continuation on the work's own promise ~100 and its two handlers
// (bound to the call) ~100, so a success costs one `.then`.

/** Pause before a refusal by a guard of this process is reported (DESIGN §3.7); not configurable. */
export const GUARDED_PAUSE_MS = 100;

/**
 * The call, rule after rule: its opening; then per attempt the retry decision (before every attempt
 * but the first, and first for a continuation), admission, the bounded attempt, recording; then
 * the one settling (`call.settle`), or the one refusal path when a guard refused.
 */
export function loop<T>(call: Call<T>): Promise<T> {
  if (begin(call) === Step.Stop) return settled(call);
  return call.attempts > 0 ? retry(call) : attempt(call);
}

/** After a failed attempt: the retry decision, its backoff, then the next attempt. */
function retry<T>(call: Call<T>): Promise<T> {
  const decision = decideRetry(call);
  if (decision === Step.Refuse) return refuse(call);
  if (decision === Step.Stop) return settled(call);
  return call.delay > 0 ? backoff(call) : attempt(call);
}

/** The backoff before a retry; the caller's abort ends the call as cancelled, a drain with the failure it has. */
async function backoff<T>(call: Call<T>): Promise<T> {
  let cut: boolean;
  try {
    cut = await sleep(call.plan.clock, call.delay, call.signal, call.plan.options.drain);
  } catch (reason) {
    call.fail('cancelled', reason);
    return call.settle();
  }
  if (cut) {
    // The retry decided before the drain never happens: its token goes back.
    call.plan.bucket?.refund();
    return drained(call);
  }
  return attempt(call);
}

/**
 * Admission, then the attempt: its outcome goes to the call's continuations (`attempted`,
 * `attemptFailed`, bound to the call), or for a bounded attempt to the race of the work against its
 * bound's timer, whose continuations are bound to the attempt.
 */
function attempt<T>(call: Call<T>): Promise<T> {
  const admission = admit(call);
  if (admission === Step.Queue) return queued(call);
  if (admission === Step.Refuse) return refuse(call);
  if (admission === Step.Stop) return settled(call);
  const context = attemptContext(call);
  call.attempt = context;
  if (call.hedging !== undefined) return hedged(call, context);
  const bounded = context instanceof BoundedAttempt ? context : undefined;
  if (bounded !== undefined) {
    bounded.call = call;
    boundedAttempt(call, bounded, boundPassed.bind(bounded));
  }
  let pending: T | PromiseLike<T>;
  try {
    pending = attemptWork(call, context);
  } catch (thrown) {
    // A synchronous throw is recorded now, as an awaited one would be on its turn.
    if (bounded !== undefined) call.plan.clock.clearTimer(bounded.timer!);
    context.end();
    call.threw = true;
    call.error = thrown;
    return settledOr(call);
  }
  const work = pending instanceof Promise ? (pending as Promise<T>) : Promise.resolve(pending);
  // Bound functions cost less than closures and their context; a retry binds anew.
  if (bounded === undefined)
    return work.then((attempted<T>).bind(call), (attemptFailed<T>).bind(call)) as Promise<T>;
  work.then(won.bind(bounded), lost.bind(bounded));
  return raceOutcome<T>(bounded);
}

/** A hedgeable call's attempt, run as a race (hedging.ts); then the settling or the retry. */
function hedged<T>(call: Call<T>, context: AttemptHandle): Promise<T> {
  return race(call, context).then((step) => (step === Step.Stop ? call.settle() : retry(call)));
}

/** The attempt returned: its value, then recording. */
function attempted<T>(this: Call<T>, result: unknown): T | Promise<T> {
  const call = this;
  // A stream's attempt lasts until its first element.
  if (isStreamSource(result))
    return streamHead(call, call.attempt!, result).then(
      (attempted<T>).bind(call),
      (attemptFailed<T>).bind(call),
    );
  call.value = result as T;
  call.attempt!.end();
  return recorded(call);
}

/** The attempt threw or rejected: its outcome, then recording. */
function attemptFailed<T>(this: Call<T>, thrown: unknown): T | Promise<T> {
  this.attempt!.end();
  this.threw = true;
  this.error = thrown;
  return recorded(this);
}

/** A bounded attempt's work returned before its bound passed (a late one is dropped). */
function won(this: BoundedAttempt, result: unknown): void {
  const timer = this.timer;
  if (timer === undefined) return;
  const call = this.call as Call<unknown>;
  // A stream's attempt lasts until its first element, still inside the bound (its passing ends the stream).
  if (isStreamSource(result)) {
    streamHead(call, this, result).then(won.bind(this), lost.bind(this));
    return;
  }
  call.plan.clock.clearTimer(timer);
  this.timer = undefined;
  call.value = result;
  this.end();
  settleRace(this, call);
}

/** A bounded attempt's work threw before its bound passed (a late failure is observed and dropped). */
function lost(this: BoundedAttempt, thrown: unknown): void {
  const timer = this.timer;
  if (timer === undefined) return;
  const call = this.call as Call<unknown>;
  call.plan.clock.clearTimer(timer);
  this.timer = undefined;
  this.end();
  call.threw = true;
  call.error = thrown;
  settleRace(this, call);
}

/** A bounded attempt's bound passed first: the abort is its outcome, then recording. */
function boundPassed(this: BoundedAttempt): void {
  if (this.timer === undefined) return;
  this.timer = undefined;
  const call = this.call as Call<unknown>;
  timedOut(call, this);
  this.end();
  settleRace(this, call);
}

/** Records the race's winner and settles the race's promise with what that led to (the value, the retry's promise). */
function settleRace(attempt: BoundedAttempt, call: Call<unknown>): void {
  try {
    attempt.resolve(recorded(call));
  } catch (error) {
    attempt.reject(error);
  }
}

/** Recording, then the settling (at the end `record` just read) or the retry. */
function recorded<T>(call: Call<T>): T | Promise<T> {
  if (record(call) === Step.Stop) return call.settle(true);
  return retry(call);
}

/** Recording of an attempt outside a continuation, as the promise the loop returns. */
function settledOr<T>(call: Call<T>): Promise<T> {
  try {
    return Promise.resolve(recorded(call));
  } catch (error) {
    return Promise.reject(error);
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
  const retryAfter =
    refusal === 'BudgetExhausted'
      ? call.plan.bucket!.retryAfter()
      : refusal === 'Limited'
        ? call.plan.limiter!.refusalRetryAfter()
        : refusal === 'QuotaExhausted'
          ? quotaRefused(call)
          : call.plan.breaker!.refusalRetryAfter();
  call.fail(
    REFUSAL_REASONS[refusal],
    new CallRejectedError(refusal, retryAfter, {
      cause: call.error,
      policy: call.plan.options.name || undefined,
    }),
  );
  return call.settle();
}

/**
 * The caller's quota refused: its wait as read after the pause (1 ms when the window reset during
 * it), and the `rejectedByQuota` event saying the quota was the guard.
 */
function quotaRefused<T>(call: Call<T>): number {
  const retryAfter = call.quota!.refusal(call.plan.clock.now()) ?? 1;
  if (call.plan.listener !== undefined) {
    call.emit({
      kind: 'rejectedByQuota',
      policy: call.plan.options.name,
      attempt: call.attempts + 1,
      verdict: 'Limited',
      error: 'CallRejectedError',
      delay: retryAfter,
    });
  }
  return retryAfter;
}

/**
 * Waits in the limiter's queue for a slot (or for a rate limit's token), then admits the attempt again
 * (holding it). The caller's abort ends the call as cancelled, the deadline passing while it waits as
 * `deadlineExceeded`: time spent queued counts against the deadline; a retry's token goes back. A
 * wait that ends without a token (a shared rate limit's store answered too late) is a refusal.
 */
async function queued<T>(call: Call<T>): Promise<T> {
  let exit: QueueExit;
  try {
    exit = await call.plan.limiter!.wait(call.deadlineAt, call.signal);
  } catch (reason) {
    if (call.attempts > 0) call.plan.bucket?.refund();
    call.fail('cancelled', reason);
    return call.settle();
  }
  if (exit === QueueExit.Refused) {
    if (call.attempts > 0) call.plan.bucket?.refund();
    call.refusal = 'Limited';
    return refuse(call);
  }
  if (exit === QueueExit.Expired) {
    if (call.attempts > 0) call.plan.bucket?.refund();
    call.fail('deadlineExceeded', new DeadlineExceededError(call.deadline!, { cause: call.error }));
    return call.settle();
  }
  call.slot = Slot.Queued;
  return attempt(call);
}

/**
 * The guarded rejection pause: 100 ms, cut short by the deadline, aborted at once by the caller,
 * ended at once by a drain (then `true`).
 */
function guardedPause<T>(call: Call<T>): Promise<boolean> {
  const pause = Math.min(GUARDED_PAUSE_MS, Math.max(0, call.deadlineAt - call.plan.clock.now()));
  return sleep(call.plan.clock, pause, call.signal, call.plan.options.drain);
}

/** Ends a call the drain stopped, with the outcome it already had. */
function drained<T>(call: Call<T>): T | Promise<T> {
  stopForDrain(call);
  return call.settle();
}

/** The settling of a call that stopped without waiting, as the promise the loop returns. */
function settled<T>(call: Call<T>): Promise<T> {
  try {
    return Promise.resolve(call.settle());
  } catch (error) {
    return Promise.reject(error);
  }
}
