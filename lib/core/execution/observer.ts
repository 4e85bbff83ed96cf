import type { BreakerTransitionListener } from '../breaker/breaker-state.js';
import type { CallObserver, ExecutablePolicy } from './executable-policy.js';
import { CallEvent, type CallEventInit, breakerTransitionEvent } from '../events/call-events.js';
import type { StoreStateListener } from '../limits/leased-rate.js';
import { failureCause } from '../classification/failure-cause.js';
import { errorName } from './error-name.js';

// The telemetry seam's plumbing (DESIGN §7): composing observers, telling them safely, and the one
// place breaker transitions become events. The `CallObserver` interface itself lives beside the
// resolved settings that hold it (executable-policy.ts: the two refer to each other).

export type { CallEventSink, CallObserver } from './executable-policy.js';
export { toObserver } from './executable-policy.js';

/**
 * One observer that tells `first` then `second` everything, each with its own call state. Has only
 * the members one of them has, so an observer that does not run attempts adds no frame to them.
 */
export function composeObservers(first: CallObserver, second: CallObserver): CallObserver {
  const a = first.callStarted !== undefined;
  const b = second.callStarted !== undefined;
  // The call state is the one starter's state, or a pair when both start calls.
  const stateOf =
    a && b
      ? (s: unknown, i: 0 | 1) => (s as [unknown, unknown] | undefined)?.[i]
      : a
        ? (s: unknown, i: 0 | 1) => (i === 0 ? s : undefined)
        : (s: unknown, i: 0 | 1) => (i === 1 ? s : undefined);
  const composed: CallObserver = {};
  if (a || b) {
    composed.callStarted =
      a && b
        ? (policy) => [started(first, policy), started(second, policy)]
        : a
          ? (policy) => first.callStarted!(policy)
          : (policy) => second.callStarted!(policy);
  }
  const r1 = first.runAttempt !== undefined;
  const r2 = second.runAttempt !== undefined;
  if (r1 && r2) {
    composed.runAttempt = (state, work, context) =>
      first.runAttempt!(
        stateOf(state, 0),
        (c) => second.runAttempt!(stateOf(state, 1), work, c),
        context,
      );
  } else if (r1 || r2) {
    const runner = r1 ? first : second;
    const i = r1 ? 0 : 1;
    composed.runAttempt = (state, work, context) =>
      runner.runAttempt!(stateOf(state, i), work, context);
  }
  if (first.event !== undefined || second.event !== undefined) {
    composed.event = (event, state) => {
      tell(first, event, stateOf(state, 0));
      tell(second, event, stateOf(state, 1));
    };
  }
  if (first.retired !== undefined || second.retired !== undefined) {
    composed.retired = (policy) => {
      retire(first, policy);
      retire(second, policy);
    };
  }
  if (first.callEnded !== undefined || second.callEnded !== undefined) {
    composed.callEnded = (state, terminal) => {
      end(first, stateOf(state, 0), terminal);
      end(second, stateOf(state, 1), terminal);
    };
  }
  return composed;
}

/** `observer.callStarted(policy)`, or `undefined` when it has none or it throws. */
export function started(observer: CallObserver, policy: ExecutablePolicy): unknown {
  if (observer.callStarted === undefined) return undefined;
  try {
    return observer.callStarted(policy);
  } catch {
    // An observer never changes a call's outcome (DESIGN §3.12): a failing one only loses its state.
    return undefined;
  }
}

/** Tells `observer` about `event` (nothing when it takes no events); what it throws is swallowed. */
export function tell(observer: CallObserver, event: CallEvent, state: unknown): void {
  if (observer.event === undefined) return;
  try {
    observer.event(event, state);
  } catch {
    // An observer never changes a call's outcome (DESIGN §3.12).
  }
}

/** Reports a call's terminal event, then its end. */
export function ended(observer: CallObserver, state: unknown, terminal: CallEvent): void {
  tell(observer, terminal, state);
  end(observer, state, terminal);
}

function end(observer: CallObserver, state: unknown, terminal: CallEvent): void {
  if (observer.callEnded === undefined) return;
  try {
    observer.callEnded(state, terminal);
  } catch {
    // An observer never changes a call's outcome (DESIGN §3.12).
  }
}

/** Tells `policy`'s observer that the instance runs no more calls (evicted from its scope); what it throws is swallowed. */
export function retired(policy: ExecutablePolicy): void {
  const observer = policy.options.onEvent;
  if (observer !== undefined) retire(observer, policy);
}

function retire(observer: CallObserver, policy: ExecutablePolicy): void {
  if (observer.retired === undefined) return;
  try {
    observer.retired(policy);
  } catch {
    // An observer never changes what a scope does (DESIGN §3.12).
  }
}

/**
 * Reports an event of `policy` that belongs to no call the executor runs (a transport's own refusal,
 * such as a quota): to its observer, with no call state. Nothing is built when it has none.
 */
export function reportEvent(
  policy: ExecutablePolicy,
  init: Omit<CallEventInit, 'policy' | 'dependency'>,
): void {
  const observer = policy.options.onEvent;
  if (observer?.event === undefined) return;
  tell(
    observer,
    CallEvent.of({ ...init, policy: policy.name, dependency: policy.dependency }),
    undefined,
  );
}

/**
 * A shared rate limit's store-state listener that reports each change to the observer of whatever
 * policy `holder()` returns then: `limiterDegraded` (the store failed: calls run on the local share;
 * `error` names why) once per episode, `limiterRecovered` when the store grants again.
 */
export function storeStateReporter(holder: () => ExecutablePolicy | undefined): StoreStateListener {
  return (state, error) => {
    const policy = holder();
    if (policy === undefined) return;
    reportEvent(
      policy,
      state === 'degraded'
        ? { kind: 'limiterDegraded', error: errorName(error) }
        : { kind: 'limiterRecovered' },
    );
  };
}

/**
 * The one place breaker transitions become events (DESIGN §3.12): a breaker listener that reports
 * each state change to the observer of whatever policy `holder()` returns then (a policy's own
 * breaker: that policy; a breaker pinned to a registry name: the policy holding the name now).
 */
export function breakerTransitionReporter(
  holder: () => ExecutablePolicy | undefined,
): BreakerTransitionListener {
  return (_from, to, breakMs, trip) => {
    const policy = holder();
    const observer = policy?.options.onEvent;
    if (observer?.event === undefined) return;
    tell(
      observer,
      breakerTransitionEvent(
        policy!.name,
        to,
        breakMs,
        policy!.dependency,
        trip,
        trip === undefined || trip.lastError === undefined
          ? undefined
          : failureCause(trip.lastError),
      ),
      undefined,
    );
  };
}
