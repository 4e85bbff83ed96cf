import { Ambient, AmbientHeaders, type Criticality } from '../core/index.js';

/** Writes one header (HTTP) or metadata key (gRPC) of an attempt; `undefined` removes it. */
export type WireSetter = (name: string, value: string | undefined) => void;

/** What one attempt tells the hop below, whatever the transport. All durations are milliseconds. */
export interface AttemptStamp {
  /** Whether the call's first attempt carries the nested-retry marker ({@link marksNestedRetry}). */
  readonly retrying: boolean;
  /** The 1-based attempt number. */
  readonly attempt: number;
  /** The attempt's bound (`Infinity` for none). */
  readonly bound: number;
  /** Time left outside the attempt: the inbound request's, the caller's deadline (`Infinity` for none). */
  readonly outer: number;
  /** The criticality to send, `undefined` for none. */
  readonly criticality: Criticality | undefined;
}

/**
 * Stamps one attempt through `set`, the one rule of every transport (fetch, axios, gRPC):
 * - `X-NResilience-Retrying: 1` on the first attempt of a call that may retry, and on no other
 *   attempt (removed otherwise, so a caller's copy never travels): the nested-retry marker says "the
 *   client above you will retry this", which is what the server must know before it decides to retry
 *   too; by the time a retry goes out the amplification has already happened (DESIGN §5, §3.9);
 * - the remaining time in whole ms, `min(bound, outer)` rounded down and never below 0, when either
 *   is known, on every attempt;
 * - the criticality when given, on every attempt.
 */
export function stampAttempt(set: WireSetter, stamp: AttemptStamp): void {
  set(AmbientHeaders.retrying, stamp.retrying && stamp.attempt === 1 ? '1' : undefined);
  const remaining = Math.min(stamp.bound, stamp.outer);
  if (remaining !== Infinity)
    set(AmbientHeaders.remaining, String(Math.max(0, Math.floor(remaining))));
  if (stamp.criticality !== undefined) set(AmbientHeaders.criticality, stamp.criticality);
}

/**
 * Whether a call's first attempt carries the nested-retry marker, the one rule of every transport: a
 * repeatable request whose policy may retry it, or one made in a single-shot scope
 * (`Ambient.singleShot`, a single-shot hop): the layer above retries that call, so the hop below must
 * know as much as if this one did.
 * @param attempts the policy's attempts
 * @param repeatable whether the request may be sent again
 * @param singleShot whether the call was made in a single-shot scope; default: read from the ambient
 *   context now (a transport that read it when the call was made passes what it read)
 */
export function marksNestedRetry(
  attempts: number,
  repeatable: boolean,
  singleShot = Ambient.current()?.singleShot === true,
): boolean {
  return repeatable && (attempts > 1 || singleShot);
}

/** The inbound request's time left in ms (`Infinity` when none) and, when asked, the ambient criticality. */
export function ambientStamp(
  propagateCriticality: boolean,
): Pick<AttemptStamp, 'outer' | 'criticality'> {
  return {
    outer: Ambient.remaining() ?? Infinity,
    criticality: propagateCriticality ? Ambient.current()?.criticality : undefined,
  };
}
