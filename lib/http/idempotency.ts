import { randomUUID } from 'node:crypto';
import { PolicyConfigError } from '../core/index.js';

/** The header an idempotency key travels in (draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/**
 * Methods whose repetition has the effect of one request (RFC 9110 §9.2.2): retried after any
 * retryable failure. POST and PATCH are not on it.
 */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

// An sf-string holds printable ASCII only (RFC 8941 §3.3.3: %x20-7E); 255 is the longest key
// Stripe accepts, and the most any server documented so far takes.
const KEY_CHARACTERS = /^[\x20-\x7e]*$/;
const MAXIMUM_KEY_LENGTH = 255;

/**
 * The mark {@link markRepeatable} leaves on a request marked without a key: a key is generated per
 * logical call. An own enumerable property (not a WeakSet entry) so that a copy made by object
 * spread or `Object.assign` — `{ ...markRepeatable(init), signal }` — keeps it; `Symbol.for` so two
 * copies of this package loaded side by side read each other's mark.
 */
const GENERATE_KEY = Symbol.for('nresilience.idempotencyKey.generate');

/**
 * Declares a POST or PATCH safe to send again and stamps the `Idempotency-Key` header the server
 * deduplicates it by (DESIGN §5; the header's draft: draft-ietf-httpapi-idempotency-key-header). Both
 * halves matter: retrying without a key duplicates the order, a key without the permission is never used.
 * - With `key`, the header is set now; every attempt of the call carries it.
 * - On the wire the key is quoted: the draft defines `Idempotency-Key` as an Item Structured Header
 *   whose value MUST be a String (RFC 8941 §3.3.3), so `order-42` goes out as `Idempotency-Key:
 *   "order-42"` (a double quote or a backslash in the key is escaped with a backslash). A server that parses the field gets
 *   `order-42`; one that compares raw values (many document bare tokens, Stripe's examples among
 *   them) gets `"order-42"` on every attempt alike, so deduplication still holds — but its length
 *   limit then counts the two quotes. For such a server, set the header yourself (`headers:
 *   { 'Idempotency-Key': key }`): a request that already carries one is treated as marked and its
 *   value is sent as given.
 * - Without `key`, the resilient fetch generates a fresh UUID for each logical call made with this
 *   request object, so every attempt of one call carries the same key and two calls never share one.
 *   The mark is an enumerable symbol-keyed property: a copy by spread or `Object.assign` keeps it; a
 *   copy that drops symbols (`structuredClone`, JSON) keeps only the key stamped when it was marked,
 *   which every call made with that copy would then share — mark the copy instead.
 *   The request is also stamped with a generated key at once, for the copies that drop the mark:
 *   axios copies its config before the adapter sees it (mark an axios config per call), and
 *   `new Request(marked, init)` copies a `Request`'s headers but not its properties.
 *
 * A request that already carries an `Idempotency-Key` header is treated as marked.
 * @param request a `RequestInit` (its `headers` may be a `Headers`, a record or pairs), a `Request`,
 *   or an axios request config; modified in place and returned
 * @param key the key: 1 to 255 printable ASCII characters (0x20–0x7E, what an sf-string may hold)
 * @returns `request`
 * @throws PolicyConfigError (field `idempotencyKey`, naming the first character out of range) for a
 *   key breaking that rule; TypeError for a request that is not an object
 */
export function markRepeatable<T extends object>(request: T, key?: string): T {
  if (request === null || typeof request !== 'object')
    throw new TypeError(
      'markRepeatable: request must be a RequestInit, a Request or an axios config object',
    );
  if (key !== undefined) checkKey(key);
  if (key === undefined)
    Object.defineProperty(request, GENERATE_KEY, {
      value: true,
      enumerable: true,
      configurable: true,
      writable: true,
    });
  setHeader(request, IDEMPOTENCY_KEY_HEADER, quoteKey(key ?? randomUUID()));
  return request;
}

/**
 * Thrown by the resilient fetch (and the axios seam, as `AxiosNotRepeatableError`) when a
 * request that is not safe to send again (a POST or PATCH without an `Idempotency-Key`) failed in a
 * way that would have been retried for a GET — a reset, a timeout, a stall — while the policy had
 * attempts left: the server may have acted on it, so it was sent once (DESIGN §5; the call's stop
 * reason is `notRepeatable`). `cause` is the failure itself.
 * A failed answer (a 500) is not an error: it comes back as the `Response` it is (through axios, as
 * the usual axios error with its `response`).
 */
export class NotRepeatableError extends Error {
  override readonly name = 'NotRepeatableError';
  /**
   * @param method the request's method, upper-case
   * @param url the request's URL
   * @param options `cause`: the attempt's failure (undici's `TypeError` with a `cause.code`, an
   *   `AxiosError`, an `AttemptTimeoutError`, …); `marking`: how the message tells the caller to mark
   *   the request, default `markRepeatable(init, key)`
   */
  constructor(
    readonly method: string,
    readonly url: string,
    options: { cause: unknown; marking?: string },
  ) {
    super(
      `${method} ${url} failed (${failureName(options.cause)}) and was not retried: ${method} is not idempotent and the server may have acted on it. ` +
        `If the server deduplicates by Idempotency-Key, mark the request with ${options.marking ?? 'markRepeatable(init, key)'} to let it retry`,
      { cause: options.cause },
    );
  }
}

/** What a failure is called in a message: its socket code when it has one (`ECONNRESET`), else its name. */
function failureName(failure: unknown): string {
  if (typeof failure !== 'object' || failure === null) return String(failure);
  const code =
    (failure as { cause?: { code?: unknown } }).cause?.code ?? (failure as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return failure instanceof Error ? failure.name : 'error';
}

/** Whether `request` was marked by {@link markRepeatable} to get a generated key per call. */
export function wantsGeneratedKey(request: object | undefined): boolean {
  return request !== undefined && (request as { [GENERATE_KEY]?: unknown })[GENERATE_KEY] === true;
}

/** A fresh idempotency key header value: a UUID as a structured-field string. */
export function freshIdempotencyKey(): string {
  return quoteKey(randomUUID());
}

/** Whether `method` is idempotent (RFC 9110 §9.2.2), so any retryable failure may be retried. */
export function isIdempotentMethod(method: string): boolean {
  return IDEMPOTENT_METHODS.has(method.toUpperCase());
}

/** Methods a hedged policy may send twice at once: safe ones (RFC 9110 §9.2.1), whose copies change nothing. */
const HEDGEABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request may be hedged (two copies in flight at once, DESIGN §3.8): a GET, HEAD or
 * OPTIONS, or a request carrying an `Idempotency-Key` (the server deduplicates its copies). PUT and
 * DELETE without a key are retried but never hedged: two copies in flight may interleave with
 * another client's write. A POST or PATCH without a key is never hedged.
 * @param method the request's method
 * @param keyed whether the request carries an `Idempotency-Key` header
 */
export function isHedgeableRequest(method: string, keyed: boolean): boolean {
  return keyed || HEDGEABLE_METHODS.has(method.toUpperCase());
}

/** The key as an sf-string (RFC 8941 §4.1.6): quoted, with `\` and `"` escaped. */
function quoteKey(key: string): string {
  return `"${key.replace(/[\\"]/g, '\\$&')}"`;
}

function checkKey(key: unknown): void {
  const rule = `must be 1 to ${MAXIMUM_KEY_LENGTH} printable ASCII characters (0x20-0x7E, the characters a structured-field string may hold: RFC 8941 §3.3.3)`;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAXIMUM_KEY_LENGTH) {
    throw new PolicyConfigError(
      'idempotencyKey',
      key,
      `${rule}; got ${typeof key === 'string' ? `${key.length} characters` : typeof key}`,
    );
  }
  if (!KEY_CHARACTERS.test(key)) {
    let index = 0;
    while (KEY_CHARACTERS.test(key[index]!)) index++;
    const code = key.charCodeAt(index).toString(16).toUpperCase().padStart(4, '0');
    throw new PolicyConfigError(
      'idempotencyKey',
      key,
      `${rule}; U+${code} at index ${index} is not`,
    );
  }
}

function setHeader(request: object, name: string, value: string): void {
  if (request instanceof Request) {
    request.headers.set(name, value);
    return;
  }
  const target = request as { headers?: unknown };
  const headers = target.headers;
  if (headers === undefined || headers === null) target.headers = { [name]: value };
  else if (headers instanceof Headers) headers.set(name, value);
  else if (typeof (headers as { set?: unknown }).set === 'function')
    (headers as { set(n: string, v: string): void }).set(name, value);
  else if (Array.isArray(headers)) {
    const kept = headers.filter(([n]) => String(n).toLowerCase() !== name);
    target.headers = [...kept, [name, value]];
  } else {
    const record = { ...(headers as Record<string, string>) };
    for (const existing of Object.keys(record))
      if (existing.toLowerCase() === name) delete record[existing];
    record[name] = value;
    target.headers = record;
  }
}
