import { stopReasonOf } from '../core/index.js';
import { type DependencyFailure, failureCause } from '../core/internal.js';

// Keyed by the error a `@Resilient` method rejected with; failure path only, objects only.
const failures = new WeakMap<object, DependencyFailure>();

/**
 * Records, when `error` ended a `@Resilient` method's call with its attempts exhausted on the
 * method's own error, what the opt-in 502 logs for it: the policy, the method (`Class.method`) and the
 * cause in a word (`ECONNREFUSED`, `HTTP 503`, the error's name).
 * @param error what the method's policy rejected with
 * @param policy the policy's name
 * @param method the method as `Class.method`
 */
export function noteMethodFailure(error: unknown, policy: string, method: string): void {
  if (typeof error !== 'object' || error === null) return;
  if (stopReasonOf(error) !== 'attemptsExhausted') return;
  failures.set(error, {
    policy,
    dependency: method,
    cause: failureCause(error),
    ending: 'attemptsExhausted',
  });
}

/** What {@link noteMethodFailure} recorded for `error`, if anything. */
export function methodFailureOf(error: unknown): DependencyFailure | undefined {
  return typeof error === 'object' && error !== null ? failures.get(error) : undefined;
}
