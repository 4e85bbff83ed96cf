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
