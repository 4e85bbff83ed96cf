import { Ambient, AmbientHeaders } from '../core/index.js';

/**
 * Stamps one attempt's headers through `set` (`undefined` removes): `X-NResilience-Retrying: 1` when
 * the call may retry (removed otherwise, so a caller's copy never travels on a call that will not);
 * the remaining time in whole ms — the lower of the attempt's bound and the inbound caller's time
 * left — when either is known; the ambient criticality when asked and labeled.
 */
export function stampAttempt(set: (name: string, value: string | undefined) => void, retrying: boolean, bound: number, propagateCriticality: boolean): void {
  set(AmbientHeaders.retrying, retrying ? '1' : undefined);
  const remaining = Math.min(bound, Ambient.remaining() ?? Infinity);
  if (remaining !== Infinity) set(AmbientHeaders.remaining, String(Math.max(0, Math.floor(remaining))));
  const criticality = propagateCriticality ? Ambient.current()?.criticality : undefined;
  if (criticality !== undefined) set(AmbientHeaders.criticality, criticality);
}
