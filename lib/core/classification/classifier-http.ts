import { Classifier, type ClassifierRule } from './classifier.js';
import { parseRetryAfter } from '../backoff/retry-after.js';
import { Verdict } from './verdict.js';

/**
 * The verdict for an HTTP status (DESIGN §5): 2xx/3xx Ok; 408, 500, 502, 504 Transient; 429 and a
 * 503 carrying `Retry-After` Throttled with that hint; a 503 without one Transient (the server is
 * down, not defending itself); other 5xx Transient; other 4xx Ok, since they are answers retrying
 * cannot change and a client's mistake is no evidence against the dependency.
 * @param status the response status
 * @param retryAfter the `Retry-After` header value, if any (delta-seconds or an HTTP-date; negative,
 *   fractional or garbage values give no hint)
 * @param wallNow ms since the epoch, for the HTTP-date form
 */
export function httpStatusVerdict(status: number, retryAfter: string | null | undefined, wallNow: number): Verdict {
  if (status === 429) return Verdict.throttled(parseRetryAfter(retryAfter, wallNow));
  if (status === 503) {
    const hint = parseRetryAfter(retryAfter, wallNow);
    return hint === undefined ? Verdict.transient : Verdict.throttled(hint);
  }
  if (status === 408 || status >= 500) return Verdict.transient;
  return Verdict.ok;
}

/** Wall-clock ms since the epoch, for HTTP-dates (the monotonic policy clock cannot give it). */
function systemWallClock(): number {
  return performance.timeOrigin + performance.now();
}

/** A status and a header reader, from a fetch `Response` or an error carrying an HTTP response (axios). */
function statusOf(value: unknown): { status: number; header: (name: string) => string | null | undefined } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (value instanceof Response) return { status: value.status, header: (name) => value.headers.get(name) };
  const response = (value as { response?: { status?: unknown; headers?: unknown } }).response;
  if (typeof response?.status === 'number') {
    const headers = response.headers as { get?: (name: string) => unknown } | Record<string, unknown> | undefined;
    const header = (name: string): string | undefined => {
      const raw = typeof headers?.get === 'function' ? (headers.get as (n: string) => unknown)(name) : (headers as Record<string, unknown> | undefined)?.[name];
      return typeof raw === 'string' ? raw : Array.isArray(raw) ? String(raw[0]) : undefined;
    };
    return { status: response.status, header };
  }
  return undefined;
}

/**
 * The HTTP rule, reading HTTP-dates against `wallClock` (ms since the epoch): a returned `Response` and an error carrying an HTTP response (an axios error's
 * `response`) are judged by {@link httpStatusVerdict} (a thrown answer that would be Ok is Permanent,
 * so it reaches the caller untouched); anything else goes to the default rules (network failures
 * Transient, caller aborts Permanent).
 */
export function httpRuleAt(wallClock: () => number): ClassifierRule {
  return (outcome) => {
    const answer = statusOf(outcome.ok ? outcome.value : outcome.error);
    if (answer === undefined) return undefined;
    const verdict = httpStatusVerdict(answer.status, answer.header('retry-after'), wallClock());
    // A thrown 4xx (axios rejects it) is the same answer: not retried, not evidence, and rethrown as is.
    return !outcome.ok && verdict.kind === 'Ok' ? Verdict.permanent : verdict;
  };
}

/** {@link httpRuleAt} on the system's wall clock. */
export const httpRule: ClassifierRule = httpRuleAt(systemWallClock);

/** The HTTP classifier (DESIGN §5): {@link httpRule}, then the default rules. */
export const httpClassifier: Classifier = Classifier.of(httpRule);
