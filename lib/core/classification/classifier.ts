import { PolicyConfigError, RateLimitedError, RelayedRefusalError } from '../errors.js';
import type { ClassifierRule, ClassifyContext, Outcome } from './classifier-rule.js';
import { grpcStatusRule } from './grpc-status.js';
import { httpRule } from './http-classifier.js';
import { Verdict } from './verdict.js';

export type { ClassifierRule, ClassifyContext, Outcome } from './classifier-rule.js';

/**
 * Turns an attempt's outcome into a {@link Verdict} (DESIGN §3.3). Rules are tried in order; the first
 * verdict wins; the default rules decide what no rule recognised.
 */
export class Classifier {
  private constructor(
    private readonly rules: readonly ClassifierRule[],
    // True when the rules judge thrown errors only: every returned value is then Ok, unclassified.
    private readonly errorsOnly = false,
  ) {}

  /**
   * The default: a returned value is Ok; an abort caused by the caller is Permanent;
   * `PolicyConfigError`, `TypeError`, `RangeError` are Permanent — except fetch's network failure, a
   * `TypeError` whose `cause` carries a socket error `code` (ECONNREFUSED, ECONNRESET, …), which is
   * Transient; every other error is Transient.
   */
  static readonly default = new Classifier([]);

  /**
   * gRPC statuses (DESIGN §6, gRFC A6), then the default rules: UNAVAILABLE, INTERNAL, UNKNOWN,
   * ABORTED and an attempt's DEADLINE_EXCEEDED are Transient; RESOURCE_EXHAUSTED is Throttled with
   * the server's `grpc-retry-pushback-ms` when sent; a negative or unparsable pushback means do not
   * retry (Permanent); CANCELLED and the answers (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
   * PERMISSION_DENIED, UNAUTHENTICATED, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED, …) are
   * Permanent: not retried, never breaker evidence. Reads grpc-js `ServiceError`s, status objects and
   * Nest `RpcException`s; see {@link grpcStatusRule}.
   */
  static readonly grpc = new Classifier([grpcStatusRule]);

  /**
   * For values and errors that carry an HTTP status (DESIGN §5): a fetch `Response`; errors with
   * `response.status` (axios), `response.statusCode` (got), `getStatus()` (a Nest `HttpException`),
   * `status` or `statusCode`. 500, 502, 504 (every 5xx but 501 and 505) and 408 → Transient; 429, and
   * 503 with a `Retry-After` → Throttled with the hint in ms (delta-seconds or HTTP-date; a malformed
   * value gives no hint); 503 without → Transient; other 4xx (and 501, 505) are answers → Permanent:
   * never retried, never breaker evidence, not a successful probe. Anything without a status (a
   * network error, a bug) falls to the default rules. Compose it: `Classifier.http.with(myRule)`.
   */
  static readonly http: Classifier = new Classifier([httpRule]);

  /**
   * A classifier trying `rules` first (first match wins), then the default rules.
   * @throws PolicyConfigError when a rule is not a function.
   */
  static of(...rules: ClassifierRule[]): Classifier {
    rules.forEach((rule, index) => {
      if (typeof rule !== 'function')
        throw new PolicyConfigError(`classifier[${index}]`, rule, 'must be a function');
    });
    return new Classifier(rules);
  }

  /**
   * A classifier whose `rules` judge thrown errors only (first match wins, then the default rules);
   * every returned value is Ok without being classified, so the executor keeps its fast success path.
   * @throws PolicyConfigError when a rule is not a function.
   */
  static forErrors(...rules: ClassifierRule[]): Classifier {
    return new Classifier(Classifier.of(...rules).rules, true);
  }

  /** A rule giving `verdict` for errors that are instances of `type`. */
  static when(type: abstract new (...args: never[]) => unknown, verdict: Verdict): ClassifierRule {
    return (outcome) => (!outcome.ok && outcome.error instanceof type ? verdict : undefined);
  }

  /** A new classifier with `rules` tried before this one's (values are classified by all of them). */
  with(...rules: ClassifierRule[]): Classifier {
    return Classifier.of(...rules, ...this.rules);
  }

  /** True when every returned value is Ok (no custom rules, or rules for errors only): the executor's success path skips classifying. */
  get valuesAreOk(): boolean {
    return this.errorsOnly || this.rules.length === 0;
  }

  /** The verdict for a returned value; allocation-free when values are not classified. */
  classifyValue(value: unknown, context: ClassifyContext): Verdict {
    return this.valuesAreOk ? Verdict.ok : this.classify({ ok: true, value }, context);
  }

  /** The verdict for a thrown error. */
  classifyError(error: unknown, context: ClassifyContext): Verdict {
    return this.classify({ ok: false, error }, context);
  }

  /**
   * The verdict for one outcome. A self-imposed refusal (`RateLimitedError`) is always Limited, a
   * refusal relayed from a lower hop (`RelayedRefusalError`) and a caller's abort always Permanent,
   * whatever the rules say.
   */
  classify(outcome: Outcome, context: ClassifyContext): Verdict {
    if (!outcome.ok) {
      if (outcome.error instanceof RateLimitedError) return Verdict.limited;
      if (outcome.error instanceof RelayedRefusalError) return Verdict.permanent;
      if (context.callerAborted) return Verdict.permanent;
    }
    for (const rule of this.rules) {
      const verdict = rule(outcome, context);
      if (verdict !== undefined) return verdict;
    }
    return defaultVerdict(outcome);
  }
}

function defaultVerdict(outcome: Outcome): Verdict {
  if (outcome.ok) return Verdict.ok;
  const error = outcome.error;
  if (isNetworkFailure(error)) return Verdict.transient;
  if (
    error instanceof PolicyConfigError ||
    error instanceof TypeError ||
    error instanceof RangeError
  ) {
    return Verdict.permanent;
  }
  return Verdict.transient;
}

/**
 * Node's fetch (undici) reports a refused, reset or timed-out connection as `TypeError('fetch failed')`
 * with the socket error as `cause`; that is a transient network failure, not a programming error.
 */
function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TypeError') return false;
  const cause = (error as { cause?: unknown }).cause as { code?: unknown } | undefined;
  return typeof cause === 'object' && cause !== null && typeof cause.code === 'string';
}
