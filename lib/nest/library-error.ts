import { HttpException } from '@nestjs/common';
import {
  AttemptStalledError,
  AttemptTimeoutError,
  CallRejectedError,
  DeadlineExceededError,
  RateLimitedError,
} from '../core/index.js';
import { type DependencyFailure, dependencyFailureOf } from '../core/internal.js';

/** The library's errors that end a call and say why by their class alone. */
export type EndingError =
  | CallRejectedError
  | RateLimitedError
  | DeadlineExceededError
  | AttemptTimeoutError
  | AttemptStalledError;

/** What {@link findLibraryError} found behind a thrown value. */
export interface LibraryErrorFound {
  /** The library's error, or the error a client of the library marked as a dependency's failure. */
  readonly error: object;
  /** Which dependency failed, when one of the library's clients recorded it. */
  readonly failure: DependencyFailure | undefined;
}

// The HTTP client's errors, known by name: the Nest entry does not load the HTTP client's modules.
const HTTP_CLIENT_ENDINGS = new Set([
  'NotRepeatableError',
  'BodyNotReplayableError',
  'ResumeRefusedError',
]);
// How deep a `cause` chain is followed (grpc-js: ServiceError → our error; an app's wrapper adds one).
const MAXIMUM_DEPTH = 8;

/** Whether `error` is one of the library's errors that end a call, recognised by class. */
export function isEndingError(error: unknown): error is EndingError {
  return (
    error instanceof CallRejectedError ||
    error instanceof DeadlineExceededError ||
    error instanceof AttemptTimeoutError ||
    error instanceof AttemptStalledError ||
    error instanceof RateLimitedError
  );
}

/**
 * The library's error behind `exception`, wherever it is wrapped: the value itself or a `cause` of it
 * (a grpc-js `ServiceError` carries ours as `cause`, an application's wrapper error too), up to 8
 * levels deep. An `HttpException` is the application's own answer and is never looked into.
 * Recognised: the ending errors (refusals, deadlines, attempt timeouts, stalls, local rate limits), the
 * HTTP client's own errors (`NotRepeatableError`, `BodyNotReplayableError`, `ResumeRefusedError`) and
 * any error a client of the library recorded as its dependency's failure.
 * @param exception any thrown value
 */
export function findLibraryError(exception: unknown): LibraryErrorFound | undefined {
  let at: unknown = exception;
  for (let depth = 0; depth < MAXIMUM_DEPTH && typeof at === 'object' && at !== null; depth++) {
    if (at instanceof HttpException) return undefined;
    const failure = dependencyFailureOf(at);
    if (
      isEndingError(at) ||
      failure !== undefined ||
      HTTP_CLIENT_ENDINGS.has((at as { name?: unknown }).name as string)
    )
      return { error: at, failure };
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}
