/**
 * The `Retry-After` header (RFC 9110 §10.2.3): either delay-seconds (a non-negative integer) or an
 * HTTP-date. Anything else (negative, fractional, garbage, absent, not a string), and a date that is not
 * after now, yields no hint, so the caller falls back to its normal backoff — never to the maximum delay.
 */

const DELTA_SECONDS = /^\d+$/;
// IMF-fixdate, the form RFC 9110 requires senders to use; obsolete forms are accepted by Date.parse too.
const HTTP_DATE =
  /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$|^[A-Za-z]+, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$|^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * Parses a `Retry-After` value into milliseconds to wait. Never throws, whatever it is given (header
 * parsers never throw): anything but a string is no hint.
 * @param value the header value (`null`/`undefined` when absent; a number, an array, an object → no hint)
 * @param nowEpochMs the current wall-clock time in ms since the epoch, needed for the HTTP-date form
 *   (wall time, because the header carries wall time); not a finite number → a date gives no hint
 * @returns ms to wait (`0` for delay-seconds `0`), or `undefined` when the value is absent, malformed,
 *   or a date that is not after now (the wait it asked for is over: the caller's own backoff applies)
 */
export function parseRetryAfter(value: unknown, nowEpochMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text.length === 0) return undefined;
  if (DELTA_SECONDS.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  if (!HTTP_DATE.test(text) || typeof nowEpochMs !== 'number' || !Number.isFinite(nowEpochMs))
    return undefined;
  const wait = Date.parse(text) - nowEpochMs;
  return wait > 0 ? wait : undefined;
}

/** The longest `Retry-After` {@link formatRetryAfter} writes: one day, in seconds. */
export const MAXIMUM_RETRY_AFTER_SECONDS = 86_400;

/**
 * Formats a wait as `Retry-After` delay-seconds for a caller: whole seconds, rounded up,
 * at least 1 (a `0` invites an immediate retry), at most one day, digits only — never `Infinity`,
 * `NaN` or an exponent, whatever the wait. The core's own `retryAfter` stays exact ms; only the
 * header is coarse.
 * @param ms the wait in milliseconds (any number; NaN counts as no wait)
 * @returns the header value, e.g. `2` for 1200 ms, `1` for 0 ms, `86400` for a week or `Infinity`
 */
export function formatRetryAfter(ms: number): string {
  const seconds = ms > 0 ? Math.ceil(ms / 1000) : 1;
  return String(
    seconds < MAXIMUM_RETRY_AFTER_SECONDS ? Math.max(1, seconds) : MAXIMUM_RETRY_AFTER_SECONDS,
  );
}
