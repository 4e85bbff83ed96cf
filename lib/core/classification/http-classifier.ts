import type { ClassifierRule } from './classifier-rule.js';
import { WallClock } from '../time/clock.js';
import { parseRetryAfter } from './retry-after.js';
import { Verdict } from './verdict.js';
import { isHttpStatus as isStatus } from '../rules/option-rules.js';

/** What an HTTP status means for a retry and for the breaker (DESIGN §5). */
export type HttpStatusMeaning = 'ok' | 'transient' | 'throttled' | 'answer';

/**
 * The meaning of an HTTP status:
 * - 1xx–3xx → `ok`;
 * - 408 Request Timeout, 500, 502, 504 and every other 5xx except 501 and 505 → `transient` (the
 *   dependency failed this time; a retry may succeed; breaker evidence);
 * - 429 Too Many Requests → `throttled` (the dependency asks us to slow down; not evidence);
 * - 503 Service Unavailable → `throttled` when it carries a `Retry-After` hint, else `transient`;
 * - every other 4xx, and 501 Not Implemented, 505 HTTP Version Not Supported → `answer`: the
 *   dependency answered and a retry would get the same answer (never retried, never evidence).
 * @param status an HTTP status code
 * @param hasRetryAfter whether the response carried a usable `Retry-After` (only matters for 503)
 */
export function httpStatusMeaning(status: number, hasRetryAfter: boolean): HttpStatusMeaning {
  if (status < 400) return 'ok';
  if (status === 429) return 'throttled';
  if (status === 503) return hasRetryAfter ? 'throttled' : 'transient';
  if (status === 408) return 'transient';
  if (status < 500 || status === 501 || status === 505) return 'answer';
  return 'transient';
}

/** An HTTP status and the response headers, as found on a value or an error. */
export interface HttpFacts {
  /** The status code, an integer in [100, 599]. */
  readonly status: number;
  /** The response headers when found (a fetch `Headers`, axios `AxiosHeaders` or a plain object). */
  readonly headers: unknown;
}

type Bag = Record<string, unknown>;

function asObject(value: unknown): Bag | undefined {
  return value !== null && (typeof value === 'object' || typeof value === 'function')
    ? (value as Bag)
    : undefined;
}

/** The status of a response-like object: `status` (fetch, axios) or `statusCode` (got, Node's IncomingMessage). */
function responseStatus(response: Bag): number | undefined {
  if (isStatus(response.status)) return response.status;
  if (isStatus(response.statusCode)) return response.statusCode;
  return undefined;
}

/**
 * The HTTP facts a returned value carries, when it looks like a response: a numeric `status` (or
 * `statusCode`) beside `headers` — a fetch `Response`, an axios or got response. Any other value
 * (a domain object that happens to have a `status`) carries none.
 */
export function httpFactsOfValue(value: unknown): HttpFacts | undefined {
  const response = asObject(value);
  if (response === undefined || asObject(response.headers) === undefined) return undefined;
  const status = responseStatus(response);
  return status === undefined ? undefined : { status, headers: response.headers };
}

/**
 * The HTTP facts an error carries, tried in order: `error.response` with a status (axios, got, and
 * errors that wrap a fetch `Response`); a Nest `HttpException`'s `getStatus()`; the error's own
 * `status` or `statusCode` (with `error.headers` when present). `undefined` when it carries none
 * (network errors, timeouts, bugs), so the default rules decide.
 */
export function httpFactsOfError(error: unknown): HttpFacts | undefined {
  const e = asObject(error);
  if (e === undefined) return undefined;
  const response = asObject(e.response);
  if (response !== undefined) {
    const status = responseStatus(response);
    if (status !== undefined) return { status, headers: response.headers };
  }
  if (typeof e.getStatus === 'function') {
    let status: unknown;
    try {
      status = (e.getStatus as () => unknown)();
    } catch {
      status = undefined;
    }
    if (isStatus(status)) return { status, headers: e.headers };
  }
  const status = responseStatus(e);
  return status === undefined ? undefined : { status, headers: e.headers };
}

/**
 * The `Retry-After` value of `headers`, whichever shape they have: anything with `get(name)` (fetch
 * `Headers`, axios `AxiosHeaders`, a `Map`), or a plain object keyed in any letter case (Node and got
 * lower-case them). A list takes its first element. `undefined` when absent or not text.
 */
export function retryAfterHeader(headers: unknown): string | undefined {
  const bag = asObject(headers);
  if (bag === undefined) return undefined;
  let value: unknown;
  if (typeof bag.get === 'function') {
    try {
      value = (bag.get as (name: string) => unknown)('retry-after');
    } catch {
      value = undefined;
    }
  }
  if (value === undefined || value === null) {
    value = bag['retry-after'];
    if (value === undefined) {
      const key = Object.keys(bag).find((k) => k.toLowerCase() === 'retry-after');
      value = key === undefined ? undefined : bag[key];
    }
  }
  if (Array.isArray(value)) value = value[0];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

/**
 * The verdict for an HTTP status and its `Retry-After` value (see {@link httpStatusMeaning}): an
 * answer is `Permanent` (not retried, not evidence, not a successful probe).
 * @param status the response status
 * @param retryAfter the `Retry-After` header value, if any (delta-seconds or an HTTP-date; negative,
 *   fractional or garbage values give no hint and are never thrown)
 * @param wallNow ms since the epoch, for the HTTP-date form
 */
export function httpStatusVerdict(
  status: number,
  retryAfter: string | null | undefined,
  wallNow: number,
): Verdict {
  if (status < 400) return Verdict.ok;
  const hint = status === 429 || status === 503 ? parseRetryAfter(retryAfter, wallNow) : undefined;
  switch (httpStatusMeaning(status, hint !== undefined)) {
    case 'ok':
      return Verdict.ok;
    case 'throttled':
      return Verdict.throttled(hint);
    case 'transient':
      return Verdict.transient;
    case 'answer':
      return Verdict.permanent;
  }
}

/** The verdict for HTTP facts; an HTTP-date hint is read against `now` (ms since the epoch). */
export function httpVerdict(facts: HttpFacts, now: () => number = WallClock.now): Verdict {
  const status = facts.status;
  if (status < 400) return Verdict.ok;
  const header = status === 429 || status === 503 ? retryAfterHeader(facts.headers) : undefined;
  return httpStatusVerdict(status, header, header === undefined ? 0 : now());
}

/**
 * The rule behind `Classifier.http`, reading HTTP-dates against `wallClock` (ms since the epoch):
 * recognises values and errors that carry an HTTP status (see {@link httpFactsOfValue},
 * {@link httpFactsOfError}) and gives them {@link httpVerdict}; anything else is left to the next rule
 * (the default rules: network errors Transient, and so on). A thrown error is never Ok: one with a
 * 2xx status failed after the headers (a body broken mid-way) and is left to the next rule too; one
 * with a 3xx is an answer the client rejected (Permanent). An answer (a 404, a 400) becomes
 * `Permanent`: the call stops with it (a returned response is still returned; a thrown error
 * rethrown), it is never retried and the breaker ignores it — neither a failure nor a successful
 * half-open probe.
 */
export function httpRuleAt(wallClock: () => number): ClassifierRule {
  return (outcome) => {
    const facts = outcome.ok ? httpFactsOfValue(outcome.value) : httpFactsOfError(outcome.error);
    if (facts === undefined) return undefined;
    return outcome.ok || facts.status >= 400
      ? httpVerdict(facts, wallClock)
      : thrownBelow400(facts.status);
  };
}

/**
 * A thrown error is never Ok. With a 2xx its request failed after the headers (axios 1.21 rejects a
 * body broken mid-way with the response): left to the next rule, judged as the error it is. With a
 * 3xx the client rejected an answer it was not told to accept (a 304, a redirect not followed).
 * Apart from the rule so the rule stays as small as before (it runs on every success).
 */
function thrownBelow400(status: number): Verdict | undefined {
  return status < 300 ? undefined : Verdict.permanent;
}

/** {@link httpRuleAt} on the system's wall clock: the rule of `Classifier.http`. */
export const httpRule: ClassifierRule = httpRuleAt(WallClock.now);
