import { type Policy, stopReasonOf } from '../core/index.js';
import { type DependencyFailure, failureCause, markDependencyFailure } from '../core/internal.js';
import { NotRepeatableError } from './idempotency.js';
import { BodyNotReplayableError } from './request-body.js';

/** A host's name as logs and telemetry give it: the origin's `host[:port]`. */
function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}

/**
 * Records on `error`, what an HTTP client call of the library rejects with, which dependency failed
 * and how (see `dependencyFailureOf`), when the call ended on the dependency's failure: attempts
 * exhausted on a transport error or failed answer, a request not safe to repeat that failed once, a body
 * that could not be sent again. Refusals, deadlines, answers (Permanent) and caller aborts are left
 * unmarked: their class says what they are, or they are not the dependency's failure.
 * @param error what the call rejects with
 * @param last the last attempt's own failure (the transport's error), when there was one
 */
export function markHttpFailure(
  error: unknown,
  last: unknown,
  policy: Policy,
  origin: string,
): void {
  const ending = endingOf(error, last);
  if (ending === undefined) return;
  const cause =
    error instanceof NotRepeatableError || error instanceof BodyNotReplayableError
      ? (error.cause ?? last)
      : error;
  markDependencyFailure(error, {
    policy: policy.options.name,
    dependency: hostOf(origin),
    cause: failureCause(cause),
    ending,
  });
}

function endingOf(error: unknown, last: unknown): DependencyFailure['ending'] | undefined {
  if (error instanceof NotRepeatableError) return 'notRepeatable';
  if (error instanceof BodyNotReplayableError) return 'bodyNotReplayable';
  const stop = stopReasonOf(error);
  // A policy that adds nothing records no stop reason: the transport's own error is then the call's.
  return stop === 'attemptsExhausted' ||
    (stop === undefined && error === last && last !== undefined)
    ? 'attemptsExhausted'
    : undefined;
}

/**
 * A function recording a body error of a response the library returned as a dependency failure
 * (`bodyBroken`): the answer broke off while the caller read it (undici's `TypeError: terminated`).
 */
export function bodyFailureMarker(policy: Policy, origin: string): (error: unknown) => void {
  const dependency = hostOf(origin);
  return (error) =>
    markDependencyFailure(error, {
      policy: policy.options.name,
      dependency,
      cause: failureCause(error),
      ending: 'bodyBroken',
    });
}
