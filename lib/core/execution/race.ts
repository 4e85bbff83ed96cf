import type { TimerHandle } from '../time/clock.js';
import { Attempt } from './attempt-context.js';

/**
 * A bounded attempt: its context, and the race of its work against its bound's timer, whichever
 * settles first deciding the attempt. The promise the loop returns for the attempt is settled
 * through `resolve` and `reject`; the timer and the work's continuations are bound to this object
 * (no closure per attempt), and the one that comes second finds `timer` gone and does nothing.
 */
export class BoundedAttempt extends Attempt {
  /** The bound's timer, until the work settles or the timer fires (then `undefined`). */
  timer: TimerHandle | undefined = undefined;
  /** The resolving functions of the attempt's promise (see {@link raceOutcome}). */
  resolve: (outcome: unknown) => void = unsettled;
  reject: (error: unknown) => void = unsettled;
  /** The call the attempt belongs to (the loop's `Call`). */
  call: unknown = undefined;
}

function unsettled(): void {}

let resolving: ((outcome: unknown) => void) | undefined;
let rejecting: ((error: unknown) => void) | undefined;

// The executor of every race's promise: a module function, so no closure is built per attempt.
function capture(resolve: (outcome: unknown) => void, reject: (error: unknown) => void): void {
  resolving = resolve;
  rejecting = reject;
}

/** A new promise for `attempt`'s race, its resolving functions kept on the attempt. */
export function raceOutcome<T>(attempt: BoundedAttempt): Promise<T> {
  const outcome = new Promise<T>(
    capture as (
      resolve: (value: T | PromiseLike<T>) => void,
      reject: (error: unknown) => void,
    ) => void,
  );
  attempt.resolve = resolving!;
  attempt.reject = rejecting!;
  resolving = rejecting = undefined;
  return outcome;
}
