import { Call, type CallRequest, type Work } from './call.js';

export type { CallContinuation } from './call.js';
import type { CallLog } from './call-result.js';
import { loop } from './loop.js';
import type { CallPlan } from './plan.js';
import { streamHead } from '../streams/stream-head.js';
import { isStreamSource } from '../streams/stream-source.js';
import { UNBOUND_FIRST_ATTEMPT } from './unbound-attempt.js';

export type { Work } from './call.js';
export { GUARDED_PAUSE_MS } from './loop.js';

/**
 * Runs `work` under the policy `plan` was read from: the one flat loop of admission, deadline checks, attempts,
 * classification, budget, backoff and events (DESIGN §3.2, loop.ts). Resolves with the value of an
 * Ok attempt (or the last value a classifier rejected, once retries are over) and rejects with the
 * final error. When `log` is given, it is filled with the stop reason, attempts and duration;
 * `request.attempts` caps this call's total below the policy's (a caller that must not repeat a
 * request passes 1).
 *
 * A policy that adds nothing to the call (`CallPlan.addsNothing`) and a call with nothing of its
 * own (no signal, log, hold or continuation) skip every rule: the work's own promise is the call's.
 */
export function execute<T>(
  plan: CallPlan,
  work: Work<T>,
  request: CallRequest | undefined,
  log: CallLog | undefined,
): Promise<T> {
  if (plan.addsNothing && log === undefined && (request === undefined || plain(request)))
    return passThrough(work, plan);
  return loop(new Call(plan, work, request, log));
}

/** Whether a call's options ask for nothing (a cap on attempts never lowers a policy of one). */
function plain(request: CallRequest): boolean {
  return (
    request.signal === undefined &&
    request.hold === undefined &&
    request.continuing === undefined &&
    request.quota === undefined
  );
}

/**
 * Nothing to retry, fund, time, bound or report, and no rule to classify by — the work's own promise
 * is the call's (no frame of ours). A synchronous throw or value becomes a rejected or resolved
 * promise, as an async function would make it.
 */
function passThrough<T>(work: Work<T>, plan: CallPlan): Promise<T> {
  let pending: T | PromiseLike<T>;
  try {
    pending = work(UNBOUND_FIRST_ATTEMPT);
  } catch (error) {
    return Promise.reject(error);
  }
  if (pending instanceof Promise) return pending as Promise<T>;
  // A stream returned as it is still waits for its first element, so `run` hands back a protected stream.
  return isStreamSource(pending)
    ? (streamHead(
        { plan, signal: undefined, attempts: 1 },
        UNBOUND_FIRST_ATTEMPT,
        pending,
      ) as Promise<T>)
    : Promise.resolve(pending);
}
