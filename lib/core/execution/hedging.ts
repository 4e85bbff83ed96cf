import { Ambient } from '../ambient/ambient-context.js';
import { Admission } from '../breaker/breaker-state.js';
import { AttemptSupersededError } from '../errors.js';
import type { HedgeState } from '../hedging/hedge-state.js';
import { SlotOutcome } from '../limits/concurrency-limiter.js';
import type { TimerHandle } from '../time/clock.js';
import { Attempt, type AttemptHandle } from './attempt-context.js';
import { type Call, Slot, Step } from './call.js';
import {
  attemptContext,
  attemptWork,
  boundedAttempt,
  guard,
  record,
  releaseSlot,
  timedOut,
} from './phases.js';
import { streamHead } from '../streams/stream-head.js';
import { isStreamSource } from '../streams/stream-source.js';
import { BoundedAttempt } from './race.js';
import { UNBOUND_FIRST_ATTEMPT } from './unbound-attempt.js';

// Hedging (DESIGN §3.8): the loop hands a hedgeable call's attempt here instead of awaiting it.
// The attempt runs as a race: when it outlasts the live threshold, the gates are asked and another
// attempt of the same call starts beside it; the first success wins, the others are aborted. Every
// attempt is recorded by the loop's own `record` (the fields of the call it reads are set to that
// attempt's before); the race hands back one Step, as `record` would for a single attempt.

/** What an entry settles with when its bound passed first (its outcome is then the abort, see `timedOut`). */
const BOUND_PASSED = Symbol('boundPassed');

/** The breaker's trip point hedging is suppressed against when there is no breaker (the default floor). */
const DEFAULT_TRIP_POINT = 0.5;

/** One attempt of a race: what `record` needs of it, saved while others run. */
interface Entry {
  readonly handle: AttemptHandle;
  readonly number: number;
  readonly start: number;
  readonly admission: Admission;
  readonly slot: Slot;
  readonly byAttemptTimeout: boolean;
}

/**
 * Runs the attempt `context` (admitted by the loop) as a race of attempts; resolves, once the race
 * is over, with the Step `record` would have given for the attempt that decided it: `Stop` (a
 * success, a verdict that is not retried, the caller's abort, the deadline — the call's reason and
 * outcome are set), or `Go` (the last attempt in flight failed and is worth retrying: the loop
 * decides the retry as for any failure). `call.attempts` is then the number of attempts started.
 */
export function race<T>(call: Call<T>, context: AttemptHandle): Promise<Step> {
  return new Promise<Step>((resolve) => new Race(call, resolve).start(context));
}

class Race<T> {
  private readonly entries: Entry[] = [];
  private readonly state: HedgeState;
  private readonly primary: number;
  private readonly raceStart: number;
  private started: number;
  private timer: TimerHandle | undefined = undefined;
  private done = false;
  /** The threshold the pending timer was armed with, ms. */
  private threshold = 0;
  /** Whether this race may hedge at all (repeatable and not Sheddable work). */
  private readonly hedgeable: boolean;

  constructor(
    private readonly call: Call<T>,
    private readonly resolve: (step: Step) => void,
  ) {
    this.state = call.hedging!;
    this.primary = this.started = call.attempts;
    this.raceStart = call.attemptStart;
    // Never for Sheddable work: read once, in the call's own context.
    this.hedgeable = Ambient.criticality() !== 'sheddable';
    if (this.hedgeable) this.state.callStarted();
  }

  start(context: AttemptHandle): void {
    // The first attempt of an unbound call shares a context nothing can abort; a race must abort its losers.
    const handle = context === UNBOUND_FIRST_ATTEMPT ? new Attempt(1, undefined) : context;
    this.call.attempt = handle;
    this.launch(handle);
    if (!this.done) this.arm(this.raceStart);
  }

  /** Starts the attempt the call's fields describe now. */
  private launch(handle: AttemptHandle): void {
    const call = this.call;
    const entry: Entry = {
      handle,
      number: call.attempts,
      start: call.attemptStart,
      admission: call.admission,
      slot: call.slot,
      byAttemptTimeout: call.byAttemptTimeout,
    };
    this.entries.push(entry);
    // A bounded attempt races its own bound's timer: whichever of the two comes first settles the entry.
    const bounded = handle instanceof BoundedAttempt ? handle : undefined;
    if (bounded !== undefined)
      boundedAttempt(call, bounded, () => this.boundPassed(entry, bounded));
    let pending: PromiseLike<unknown>;
    try {
      pending = Promise.resolve(attemptWork(call, handle));
    } catch (thrown) {
      this.workSettled(entry, bounded, thrown, true);
      return;
    }
    pending.then(
      // A stream is refused under a hedge (streamHead rejects with PolicyConfigError and ends it).
      (value) =>
        isStreamSource(value)
          ? void streamHead(call, handle, value).then(undefined, (refused: unknown) =>
              this.workSettled(entry, bounded, refused, true),
            )
          : this.workSettled(entry, bounded, value, false),
      (thrown) => this.workSettled(entry, bounded, thrown, true),
    );
  }

  /** The work of `entry` settled: recorded unless its bound passed first. */
  private workSettled(
    entry: Entry,
    bounded: BoundedAttempt | undefined,
    outcome: unknown,
    threw: boolean,
  ): void {
    if (bounded !== undefined) {
      if (bounded.timer === undefined) return;
      this.call.plan.clock.clearTimer(bounded.timer);
      bounded.timer = undefined;
    }
    this.settle(entry, outcome, threw);
  }

  /** The bound of `entry` passed before its work settled. */
  private boundPassed(entry: Entry, bounded: BoundedAttempt): void {
    if (bounded.timer === undefined) return;
    bounded.timer = undefined;
    this.settle(entry, BOUND_PASSED, false);
  }

  /** Arms the next hedge's timer, counted from `from`, when one may still start and the threshold is warm. */
  private arm(from: number): void {
    const call = this.call;
    if (
      !this.hedgeable ||
      this.entries.length >= this.state.settings.maximumConcurrent ||
      this.started >= call.maxAttempts
    )
      return;
    const threshold = this.state.threshold(from);
    if (threshold === undefined) return;
    this.threshold = threshold;
    this.timer = call.plan.clock.setTimer(threshold, () => this.fire(), false, from);
  }

  /** The threshold passed with nothing answered: asks the gates, then starts the hedge. */
  private fire(): void {
    this.timer = undefined;
    if (this.done) return;
    const call = this.call;
    const now = call.plan.clock.now();
    if (!this.gatesOpen(now)) return;
    const bucket = call.plan.bucket;
    // The retry budget pays for a hedge; a refusal stops the hedge, never the attempt running.
    if (bucket !== undefined && !bucket.tryAcquire(false)) return;
    // Then the admission of any later attempt (a refusal gives the token back), without queueing:
    // a hedge that finds no free slot, a refusing quota or breaker does not start.
    call.slot = Slot.None;
    call.admission = Admission.Closed;
    if (guard(call, this.started + 1, false) !== Step.Go) {
      // The attempt running goes on: nothing was refused to the call.
      call.refusal = undefined;
      return;
    }
    this.state.hedged();
    const hedgedAfter = now - this.entries[this.entries.length - 1].start;
    const number = ++this.started;
    call.attempts = number;
    call.attemptStart = now;
    const handle = attemptContext(call);
    if (call.plan.listener !== undefined)
      call.emit({
        kind: 'hedged',
        policy: call.plan.options.name,
        attempt: number,
        duration: hedgedAfter,
        delay: this.threshold,
      });
    this.launch(handle);
    if (!this.done) this.arm(now);
  }

  /**
   * The gates a hedge passes when its timer fires: the caller has not aborted, no drain, time left,
   * the breaker closed, and the state's own (failure rate below `suppressAt` of the breaker's trip
   * point, the share cap, the win rate).
   */
  private gatesOpen(now: number): boolean {
    const call = this.call;
    if (
      call.signal?.aborted === true ||
      call.plan.options.drain?.draining === true ||
      now >= call.deadlineAt
    )
      return false;
    const breaker = call.plan.breaker;
    if (breaker !== undefined && !breaker.closed) return false;
    const floor = breaker?.settings.failureRateFloor;
    return this.state.mayHedge(now, floor !== undefined && floor > 0 ? floor : DEFAULT_TRIP_POINT);
  }

  /** One attempt's outcome: recorded as the loop records any; then the race goes on or ends. */
  private settle(entry: Entry, outcome: unknown, threw: boolean): void {
    if (this.done) {
      // A loser aborted by us (or one that answered after the race ended): not a failure, nothing recorded.
      entry.handle.end();
      return;
    }
    const entries = this.entries;
    entries.splice(entries.indexOf(entry), 1);
    const call = this.call;
    call.attempts = entry.number;
    call.attempt = entry.handle;
    call.attemptStart = entry.start;
    call.admission = entry.admission;
    call.slot = entry.slot;
    call.byAttemptTimeout = entry.byAttemptTimeout;
    call.value = undefined;
    call.error = undefined;
    call.threw = false;
    call.deadlineHit = false;
    if (threw) {
      call.threw = true;
      call.error = outcome;
    } else if (outcome === BOUND_PASSED) timedOut(call, entry.handle);
    else call.value = outcome as T;
    entry.handle.end();
    let step = record(call);
    const verdict = call.verdict!;
    const end = entry.start + call.duration;
    const state = this.state;
    if (verdict.kind === 'Ok') {
      // The race's latency, from its start: a hedged call's sample still lies above the threshold,
      // so the quantile keeps the rank the first attempts' own latency gave it.
      state.latency.add(end, end - this.raceStart);
      if (entry.number !== this.primary) {
        state.won();
        call.hedgeWon = true;
      }
      this.finish(step, entry.number);
      return;
    }
    if (verdict.kind === 'Transient') state.latency.fail(end);
    const failedOver =
      (verdict.kind === 'Transient' || verdict.kind === 'Throttled') &&
      call.signal?.aborted !== true &&
      !call.deadlineHit;
    if (failedOver && entries.length > 0) {
      // Another attempt is still running: it is this failure's follow-up (never two for one failure).
      call.attempts = this.started;
      return;
    }
    if (failedOver && this.started !== entry.number) {
      // The last attempt in flight failed: whether to retry is decided on the attempts started.
      call.attempts = this.started;
      const left =
        this.started < call.maxAttempts &&
        verdict.final !== true &&
        Ambient.current()?.singleShot !== true;
      if (left) step = Step.Go;
      else {
        call.reason =
          verdict.final === true && this.started < call.maxAttempts
            ? 'notRepeatable'
            : 'attemptsExhausted';
        step = Step.Stop;
      }
    }
    this.finish(step, entry.number);
  }

  /** Ends the race: the pending hedge timer is cleared, the attempts still running are aborted. */
  private finish(step: Step, decidedBy: number): void {
    this.done = true;
    const call = this.call;
    if (this.timer !== undefined) {
      call.plan.clock.clearTimer(this.timer);
      this.timer = undefined;
    }
    const entries = this.entries;
    if (entries.length > 0) {
      const superseded = new AttemptSupersededError(decidedBy);
      for (const loser of entries) {
        loser.handle.abort(superseded);
        loser.handle.end();
        if (loser.slot !== Slot.None) {
          call.slot = loser.slot;
          releaseSlot(call, 0, SlotOutcome.Ignored);
        }
      }
      entries.length = 0;
    }
    call.attempts = this.started;
    this.resolve(step);
  }
}
