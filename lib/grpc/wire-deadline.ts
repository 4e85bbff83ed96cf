import type { InterceptorOptions } from '@grpc/grpc-js';
import { WallClock } from '../core/index.js';

/**
 * How much later than the policy's own bound the deadline sent on the wire falls, in ms: our timer
 * fires first, so a slow attempt is recorded as an attempt timeout (and cancelled by us), not as a
 * transport `DEADLINE_EXCEEDED` racing it (DESIGN §6).
 */
export const WIRE_DEADLINE_SLACK_MS = 50;

/**
 * The relative deadline to put on the wire for one attempt, in ms:
 * min(attempt bound, time left of the caller's and the inbound request's deadlines) + 50 ms slack;
 * `Infinity` when nothing bounds the attempt; `undefined` when the time left is already ≤ 0 (the
 * attempt must not be put on the wire at all).
 * @param bound ms until the policy aborts the attempt (`AttemptContext.bound`; for a server stream,
 *   `AttemptContext.remaining`, since the attempt timeout bounds only the wait for the first message)
 * @param outer ms left of the caller's own gRPC deadline and the inbound request's remaining time
 *   (`Infinity` when neither exists)
 */
export function wireDeadline(bound: number, outer: number): number | undefined {
  const left = Math.min(bound, outer);
  if (!(left > 0)) return undefined;
  return left === Infinity ? Infinity : left + WIRE_DEADLINE_SLACK_MS;
}

/**
 * Time left, in ms, outside the policy for a call the interceptor was given: the lowest of the
 * caller's own deadline (`options.deadline`), a parent server call's whose deadline propagates
 * (grpc-js `propagate.DEADLINE`, on by default) and the inbound request's `inboundRemaining`;
 * `Infinity` when none is set.
 */
export function callerTimeLeft(options: InterceptorOptions, inboundRemaining: number): number {
  const parent = options.parent;
  const flags = options.propagate_flags ?? 0xffff;
  const parentLeft =
    parent !== undefined && (flags & 1) !== 0 ? WallClock.until(parent.getDeadline()) : Infinity;
  return Math.min(WallClock.until(options.deadline), parentLeft, inboundRemaining);
}
