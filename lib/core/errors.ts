import { describeValue } from './rules/describe-value.js';

/**
 * Errors the library throws. Every class sets `name` so logs and `instanceof`-free checks work
 * across realms and bundles.
 */

/**
 * A policy option or config value is invalid. The message names the field, the value and the rule,
 * e.g. `budget.fraction: 1.5 is invalid: must be a number in [0, 1]`.
 */
export class PolicyConfigError extends Error {
  override readonly name = 'PolicyConfigError';
  /**
   * @param field dotted path of the offending option (`budget.fraction`, `policies.payments.attempts`)
   * @param value the value that was given
   * @param rule what the value must be
   */
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly rule: string,
  ) {
    super(`${field}: ${describeValue(value)} is invalid: ${rule}`);
  }

  /** The same error with `prefix.` put in front of the field (used when nesting configs). */
  under(prefix: string): PolicyConfigError {
    return new PolicyConfigError(
      prefix ? `${prefix}.${this.field}` : this.field,
      this.value,
      this.rule,
    );
  }
}

/**
 * Rejects the first key of `options` that is not in `known`, so a typo never passes silently.
 * @param options the options object as given
 * @param known the accepted keys
 * @param prefix path put before the key in the error (`budget` → `budget.ratio`); `''` for none
 * @param what what the keys are, for the rule (`policy option`, `breaker setting`)
 * @throws PolicyConfigError `<prefix>.<key>: <value> is invalid: is not a known <what> (<known>)`
 */
export function rejectUnknownKeys(
  options: object,
  known: readonly string[],
  prefix: string,
  what: string,
): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new PolicyConfigError(
        prefix ? `${prefix}.${key}` : key,
        (options as Record<string, unknown>)[key],
        `is not a known ${what} (${known.join(', ')})`,
      );
    }
  }
}

/** Why a guard of this process refused a call. */
export type RejectionReason =
  'BudgetExhausted' | 'DependencyUnavailable' | 'Limited' | 'RateLimited' | 'QuotaExhausted';

/**
 * A guard of this process refused to start an attempt: the retry budget is empty (`BudgetExhausted`),
 * the breaker is open (`DependencyUnavailable`) or the concurrency limit is reached with its queue
 * full (`Limited`; `retryAfter` the median time a slot was held lately, `undefined` before the first
 * slot came back). Reported after the 100 ms guarded pause
 * (DESIGN §3.7). `retryAfter` (ms) is when asking again may succeed: for a breaker refusal always set
 * (the break left while open; while half-open with its probes out, the probe timeout left capped at
 * the break last served — see `CircuitBreaker.refusalRetryAfter`), for a budget refusal `undefined`
 * only when its floor is 0.
 * `cause` is the attempt failure that led to the refused retry, when there was one.
 */
export class CallRejectedError extends Error {
  override readonly name = 'CallRejectedError';
  /**
   * @param reason which guard refused
   * @param retryAfter ms until asking again may succeed, `undefined` when unknown
   * @param options `cause`: the attempt failure behind a refused retry; `policy`: the policy's name for the message
   */
  constructor(
    readonly reason: RejectionReason,
    readonly retryAfter: number | undefined,
    options?: { cause?: unknown; policy?: string },
  ) {
    super(
      `${options?.policy ? `[${options.policy}] ` : ''}call rejected: ${reason}` +
        (retryAfter === undefined ? '' : ` (retry after ${Math.ceil(retryAfter)}ms)`),
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }
}

/** The call's deadline (option `deadline`, ms from the call's start) passed before it settled. */
export class DeadlineExceededError extends Error {
  override readonly name = 'DeadlineExceededError';
  /** @param deadline the deadline in milliseconds that was exceeded */
  constructor(
    readonly deadline: number,
    options?: { cause?: unknown },
  ) {
    super(`deadline of ${deadline}ms exceeded`, options);
  }
}

/** One attempt ran longer than `attemptTimeout` ms; the attempt's signal was aborted with this error. */
export class AttemptTimeoutError extends Error {
  override readonly name = 'AttemptTimeoutError';
  /** @param timeout the attempt bound in milliseconds */
  constructor(readonly timeout: number) {
    super(`attempt timed out after ${timeout}ms`);
  }
}

/**
 * The reason a hedged call's losing attempt was aborted with: another attempt of the same call
 * answered first (DESIGN §3.8). Never a call's outcome and never evidence against the dependency.
 */
export class AttemptSupersededError extends Error {
  override readonly name = 'AttemptSupersededError';
  /** @param winner the number of the attempt that answered first */
  constructor(readonly winner: number) {
    super(`attempt superseded: attempt ${winner} answered first`);
  }
}

/**
 * A stream or response body went silent: no data arrived for `gap` ms while a read was pending
 * (DESIGN §3.7, §3.10). A slow consumer never causes it; a server that stops sending does.
 */
export class AttemptStalledError extends Error {
  override readonly name = 'AttemptStalledError';
  /**
   * @param gap the allowed silence between two pieces of data, ms
   * @param received how much had arrived before the silence (bytes for a body, items for a stream)
   * @param unit what `received` counts
   */
  constructor(
    readonly gap: number,
    readonly received: number,
    readonly unit: 'bytes' | 'items' = 'bytes',
  ) {
    super(`stalled: nothing arrived for ${gap}ms after ${received} ${unit}`);
  }
}

/**
 * This process refused itself (a local limiter or quota): classified `Limited`, never evidence
 * against the dependency, never spends or deposits budget.
 */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  /**
   * @param message what refused (default `rate limited by this process`)
   * @param retryAfter ms until the local limit may admit again, if known
   */
  constructor(
    message = 'rate limited by this process',
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/**
 * A refusal a dependency's own guard answered, passed on by this process: the dependency is a
 * service of ours that refused the call (its retry budget, breaker or limiter), and says so in its
 * answer — for HTTP a 503 `application/problem+json` of type `urn:nresilience:problem:call-rejected`
 * with a `reason` and `Retry-After`. A `CallRejectedError` with the same `reason` and `retryAfter`,
 * so an exception filter answers this process's caller as the dependency answered it.
 *
 * Always classified Permanent: not retried here (the hop that refused already decided its own
 * dependency is in trouble; retrying through it from every layer above is the storm, and waiting its
 * `Retry-After` at every layer holds the caller for it), no second guarded pause (the hop that
 * refused paused), and no evidence against the dependency's breaker (the refusing hop answered at
 * once and is healthy: its own breaker and budget already act on the failing service below it).
 */
export class RelayedRefusalError extends CallRejectedError {
  /**
   * @param reason the refusing hop's reason
   * @param retryAfter its hint in ms (`Retry-After`), `undefined` when it sent none
   * @param origin where the refusal came from (the dependency's origin, e.g. `http://data:8080`)
   */
  constructor(
    reason: RejectionReason,
    retryAfter: number | undefined,
    readonly origin: string,
  ) {
    super(reason, retryAfter);
    this.message =
      `${origin} refused the call: ${reason}` +
      (retryAfter === undefined ? '' : ` (retry after ${Math.ceil(retryAfter)}ms)`);
  }
}
