import { type AmbientChanges, Criticality } from './ambient-context.js';

/**
 * Header (and gRPC metadata) names the ambient context travels in, lower-case as Node delivers them.
 * - `retrying`: `X-NResilience-Retrying: 1`, stamped by a client on the first attempt of a request it
 *   may retry, not on the retries (the nested-retry marker, wire-compatible with the .NET library).
 * - `remaining`: `X-NResilience-Remaining-Ms`, whole milliseconds the caller still waits for this attempt.
 * - `criticality`: `X-NResilience-Criticality`, a level name (`sheddable`, `sheddablePlus`, `critical`).
 * - `envoyTimeout`: Envoy's `x-envoy-expected-rq-timeout-ms`, read as a remaining time too.
 */
export const AmbientHeaders = {
  retrying: 'x-nresilience-retrying',
  remaining: 'x-nresilience-remaining-ms',
  criticality: 'x-nresilience-criticality',
  envoyTimeout: 'x-envoy-expected-rq-timeout-ms',
} as const;

/**
 * The largest remaining time accepted from the wire: 24 h. A larger value is not a deadline anyone
 * is waiting on (often a sentinel or a unit mistake), so it is ignored rather than believed.
 */
export const MAXIMUM_WIRE_REMAINING_MS = 86_400_000;

const DIGITS = /^\d{1,9}$/;

/**
 * Reads a remaining-time header value: whole milliseconds, digits only, at most
 * {@link MAXIMUM_WIRE_REMAINING_MS}. Several values (a repeated header) yield the smallest valid one.
 * @returns ms, or `undefined` for an absent or malformed value (`-1`, `abc`, `1.5`, huge) — never throws
 */
export function parseRemainingMs(
  value: string | readonly string[] | null | undefined,
): number | undefined {
  if (value == null) return undefined;
  const parts =
    typeof value === 'string' ? value.split(',') : value.flatMap((v) => String(v).split(','));
  let least: number | undefined;
  for (const part of parts) {
    const text = part.trim();
    if (!DIGITS.test(text)) continue;
    const ms = Number(text);
    if (ms <= MAXIMUM_WIRE_REMAINING_MS && (least === undefined || ms < least)) least = ms;
  }
  return least;
}

/**
 * The ambient changes an inbound request's headers ask for: the tighter of our remaining-time header
 * and Envoy's, criticality clamped at `critical` (`Criticality.fromWire`), and the nested-retry marker
 * (`1`). Malformed values are ignored, never thrown.
 * @param header returns a header's value (or values) by lower-case name, `undefined` when absent
 */
export function ambientFromHeaders(
  header: (name: string) => string | readonly string[] | undefined,
): AmbientChanges {
  const ours = parseRemainingMs(header(AmbientHeaders.remaining));
  const envoy = parseRemainingMs(header(AmbientHeaders.envoyTimeout));
  const remaining = ours === undefined ? envoy : envoy === undefined ? ours : Math.min(ours, envoy);
  const changes: AmbientChanges = {};
  if (remaining !== undefined) changes.remaining = remaining;
  const level = header(AmbientHeaders.criticality);
  const criticality = Criticality.fromWire(
    Array.isArray(level) ? level[0] : (level as string | undefined),
  );
  if (criticality !== undefined) changes.criticality = criticality;
  const marker = header(AmbientHeaders.retrying);
  if (
    (Array.isArray(marker) ? marker : [marker]).some(
      (v) => typeof v === 'string' && v.trim() === '1',
    )
  )
    changes.nestedRetry = true;
  return changes;
}
