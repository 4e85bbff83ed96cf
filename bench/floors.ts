/**
 * The floor of each preset's success path, written by hand: the work a successful call of that
 * preset must do, with the library's own primitives called directly and no executor (no call state,
 * no rule that a success skips). `ours ÷ floor` is the executor's own overhead; `floor ÷ raw` is what
 * the features cost whatever runs them. Each floor reads its primitives from the policy instance it
 * is given (give it one of its own: its own budget, breaker and measurements), as the executor does,
 * and mirrors what
 * `lib/core/execution` does for a first attempt that succeeds:
 *
 * - `Resilience.default`: the budget's call count (`recordCall`), the awaited work, the classifier's
 *   verdict of the value, the budget's record of the attempt (a token bucket deposits on Ok). No
 *   clock read: nothing times an attempt of this preset.
 * - breaker only (1 attempt, no budget): a clock reading at the start, the breaker's admission, the
 *   awaited work, the verdict, a reading at the end, the breaker's record of one success with its
 *   duration.
 * - `Resilience.http`: the budget's count, one reading at the start (the deadline, the breaker and
 *   the attempt ceiling share it), the breaker's admission, the ceiling read for the attempt's
 *   bound, a timer on the policy's clock for the bound (30 s or the ceiling), raced against the work
 *   so the bound can end the wait (one promise; the timer cleared when the work wins), the verdict of
 *   `Classifier.http`, a reading at the end, the breaker's record, the budget's record with the
 *   duration, the ceiling read at the end and the measurements' record of the attempt.
 */
import { Admission, type ClassifyContext, type Clock, type Policy } from '@nresilience/nestjs/core';
import { work as trivial } from './allocation-tasks.js';

/** The work a floor awaits (the bench's trivial async function by default). */
export type FloorWork = () => Promise<number>;

/** What the executor tells a classifier when the caller did not abort. */
const NOT_ABORTED: ClassifyContext = Object.freeze({ callerAborted: false });

/** Refused admissions never happen here (the breaker stays closed on successes); a floor still checks. */
function refused(): never {
  throw new Error('floor: the breaker refused');
}

/** The floor of `Resilience.default` (see the module note), on `policy`'s own budget, awaiting `work`. */
export function defaultFloor(policy: Policy, work: FloorWork = trivial): () => Promise<number> {
  const bucket = policy.bucket()!;
  const classifier = policy.options.classifier;
  return async () => {
    bucket.recordCall();
    const value = await work();
    bucket.recordAttempt(1, classifier.classifyValue(value, NOT_ABORTED), 0, undefined);
    return value;
  };
}

/** The floor of the breaker-only preset (see the module note), on `policy`'s own breaker, awaiting `work`. */
export function breakerFloor(policy: Policy, work: FloorWork = trivial): () => Promise<number> {
  const breaker = policy.breaker()!;
  const classifier = policy.options.classifier;
  const clock = policy.options.clock;
  return async () => {
    const start = clock.now();
    const admission = breaker.admit();
    if (admission === Admission.Refused) refused();
    const value = await work();
    const verdict = classifier.classifyValue(value, NOT_ABORTED);
    const end = clock.now();
    breaker.record(admission, verdict.kind, end - start, end, true, undefined);
    return value;
  };
}

/** The work raced against a timer of `bound` ms from `start`: the timer rejects, the work clears it. */
function bounded(work: FloorWork, clock: Clock, bound: number, start: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = clock.setTimer(
      bound,
      () => reject(new Error('floor: bound passed')),
      false,
      start,
    );
    work().then(
      (value) => {
        clock.clearTimer(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimer(timer);
        reject(error);
      },
    );
  });
}

/** The floor of `Resilience.http` (see the module note), on `policy`'s own state, awaiting `work`. */
export function httpFloor(policy: Policy, work: FloorWork = trivial): () => Promise<number> {
  const o = policy.options;
  // Resolved in the executor's order (CallPlan): each reads the clock once when it starts.
  const breaker = policy.breaker()!;
  const bucket = policy.bucket()!;
  const measured = policy.measurements()!;
  const { multiple, quantile } = o.attemptCeiling!.settings;
  const deadline = o.deadline!;
  const clock = o.clock;
  return async () => {
    bucket.recordCall();
    const start = clock.now();
    const admission = breaker.admit();
    if (admission === Admission.Refused) refused();
    const ceiling = measured.standsAside ? undefined : measured.ceiling(start, multiple, quantile);
    const value = await bounded(
      work,
      clock,
      ceiling !== undefined && ceiling < deadline ? ceiling : deadline,
      start,
    );
    const verdict = o.classifier.classifyValue(value, NOT_ABORTED);
    const end = clock.now();
    const duration = end - start;
    breaker.record(admission, verdict.kind, duration, end, true, undefined);
    bucket.recordAttempt(1, verdict, duration, undefined);
    const ok = verdict.kind === 'Ok';
    measured.record(end, duration, ok, true, measured.ceiling(end, multiple, quantile));
    return value;
  };
}
