import { Ambient, AmbientHeaders } from '../core/index.js';

/**
 * Stamps one attempt's headers through `set` (`undefined` removes):
 * - `X-NResilience-Retrying: 1` on the first attempt of a call that may retry, and on no other
 *   attempt (removed otherwise, so a caller's copy never travels): the nested-retry marker says "the
 *   client above you will retry this", which is what the server must know before it decides to retry
 *   too; by the time a retry goes out the amplification has already happened. The gRPC interceptor
 *   stamps its metadata by the same rule (DESIGN §5, §3.9);
 * - the remaining time in whole ms — the lower of the attempt's bound and the inbound caller's time
 *   left — when either is known, on every attempt;
 * - the ambient criticality when asked and labeled, on every attempt.
 * @param retrying whether the call's first attempt carries the marker ({@link marksNestedRetry})
 * @param attempt the 1-based attempt number
 * @param bound the attempt's bound in ms (`Infinity` for none)
 */
export function stampAttempt(set: (name: string, value: string | undefined) => void, retrying: boolean, attempt: number, bound: number, propagateCriticality: boolean): void {
  set(AmbientHeaders.retrying, retrying && attempt === 1 ? '1' : undefined);
  const remaining = Math.min(bound, Ambient.remaining() ?? Infinity);
  if (remaining !== Infinity) set(AmbientHeaders.remaining, String(Math.max(0, Math.floor(remaining))));
  const criticality = propagateCriticality ? Ambient.current()?.criticality : undefined;
  if (criticality !== undefined) set(AmbientHeaders.criticality, criticality);
}

/**
 * Whether a call's first attempt carries the nested-retry marker: a repeatable request whose policy
 * may retry it, or one made in a single-shot scope (`Ambient.singleShot`, a single-shot hop): the
 * layer above retries that call, so the hop below must know as much as if this one did.
 * @param attempts the policy's attempts
 */
export function marksNestedRetry(attempts: number, repeatable: boolean): boolean {
  return repeatable && (attempts > 1 || Ambient.current()?.singleShot === true);
}
