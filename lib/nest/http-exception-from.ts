import { HttpException } from '@nestjs/common';
import { WallClock, formatRetryAfter, parseRetryAfter } from '../core/index.js';

/** The `Retry-After` a {@link httpExceptionFrom} exception carries, keyed by the exception. */
const retryAfters = new WeakMap<HttpException, string>();

/**
 * An `HttpException` for a dependency's non-2xx `Response` (fetch's), with the response's status and
 * its `Retry-After` kept. Use it to pass a resilient fetch's final answer on to the caller with its
 * status, or in a `@Resilient` method that calls `fetch` itself: there the registry's classifier
 * reads the status as `Classifier.http` does (a 404 is an answer, a 503 is retried) and, for a 429 or
 * 503, waits exactly the `Retry-After` the dependency asked for (delay-seconds or an HTTP-date; a
 * malformed one is ignored) instead of the backoff. The body is `{ statusCode, message }` as Nest's own.
 * With the module's exception filter (`exceptionFilter: true`), a 429 or 503 passed on this way
 * answers your caller with that `Retry-After` too, in whole seconds (rounded up, 1 s to a day); without
 * it Nest answers the status and body alone.
 * ```ts
 * if (!response.ok) throw httpExceptionFrom(response, `payments answered ${response.status}`);
 * ```
 * @param response the dependency's answer (its body is not read)
 * @param message the exception's message; default `dependency answered <status>`
 */
export function httpExceptionFrom(
  response: Response,
  message = `dependency answered ${response.status}`,
): HttpException {
  const exception = new HttpException({ statusCode: response.status, message }, response.status);
  const retryAfter = response.headers.get('retry-after');
  if (retryAfter !== null) retryAfters.set(exception, retryAfter);
  return exception;
}

/** The `Retry-After` value an exception made by {@link httpExceptionFrom} kept, if any. @internal */
export function keptRetryAfter(exception: HttpException): string | undefined {
  return retryAfters.get(exception);
}

/**
 * The `Retry-After` the exception filter answers a passed-on 429 or 503 with: the kept value in whole
 * seconds (`formatRetryAfter`), or `undefined` for any other exception or status, and for a kept value
 * that is malformed or a date already past (a malformed header is ignored, never passed on).
 * @internal
 */
export function passedOnRetryAfter(exception: unknown): string | undefined {
  if (!(exception instanceof HttpException)) return undefined;
  const kept = retryAfters.get(exception);
  if (kept === undefined) return undefined;
  const status = exception.getStatus();
  if (status !== 429 && status !== 503) return undefined;
  const wait = parseRetryAfter(kept, WallClock.now());
  return wait === undefined ? undefined : formatRetryAfter(wait);
}
