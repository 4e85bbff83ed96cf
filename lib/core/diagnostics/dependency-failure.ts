/**
 * Which dependency failed a call of one of the library's own clients (the resilient fetch, the axios
 * seam, the gRPC interceptor), recorded on the error the caller receives so an exception filter can
 * answer 502 and say which dependency failed and why without a stack per request.
 */
export interface DependencyFailure {
  /** The policy's name (`orders`). */
  readonly policy: string;
  /** The dependency: `host[:port]` for HTTP, `package.Service` (or `…/Method`) for gRPC. */
  readonly dependency: string;
  /**
   * Why, in a word a log reader knows: the socket code (`ECONNREFUSED`, `ECONNRESET`), the status of a
   * failed answer (`HTTP 502`, `UNAVAILABLE`), else the error's name (`TypeError`).
   */
  readonly cause: string;
  /**
   * How the call ended: `attemptsExhausted` (every attempt allowed failed), `notRepeatable` (a request
   * not safe to repeat failed once without an answer), `bodyNotReplayable` (a retry could not resend the
   * body), `resumeRefused` (a download could not be carried on) or `bodyBroken` (the answer's body broke
   * while the caller read it).
   */
  readonly ending:
    'attemptsExhausted' | 'notRepeatable' | 'bodyNotReplayable' | 'resumeRefused' | 'bodyBroken';
}

// Keyed by the error the caller receives; a primitive cannot carry it.
const failures = new WeakMap<object, DependencyFailure>();

/** Records that `error` ended a client call as `failure` says (objects only). @internal */
export function markDependencyFailure(error: unknown, failure: DependencyFailure): void {
  if (typeof error === 'object' && error !== null) failures.set(error, failure);
}

/**
 * What failed, when `error` is what one of the library's clients rejected with after its dependency
 * failed (or what a body it returned broke with); `undefined` otherwise, for the application's own errors
 * in particular.
 * @param error any thrown value
 */
export function dependencyFailureOf(error: unknown): DependencyFailure | undefined {
  return typeof error === 'object' && error !== null ? failures.get(error) : undefined;
}
