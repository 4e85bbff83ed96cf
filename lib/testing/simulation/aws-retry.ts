import { AttemptTimeoutError, type Clock, RateLimitedError } from '../../core/index.js';
import { CubicRateLimiter } from './aws-rate-limiter.js';
import { AwsRetryQuota } from './aws-retry-quota.js';
import { DependencyOverloadedError, DependencyTimeoutError } from './dependency.js';

/** The AWS SDKs' retry modes the simulator models. */
export type AwsRetryMode = 'standard' | 'adaptive';

/** The error of a retry the AWS retry quota refused (verdict Limited: the call stops there). */
export const AWS_QUOTA_REFUSAL = new RateLimitedError(
  'retry refused by the AWS retry quota (reference model)',
);

/**
 * The AWS SDKs' retry modes (`@smithy/util-retry`), as references to measure a retry budget against
 * in the scenario matrix. Use it with `budget: RetryBudget.none`, so that it decides retries alone:
 *
 * - `AwsRetry.standard`: the retry quota. One quota of 500 tokens per client; a retry costs 5 tokens
 *   (10 after a timeout) and is refused when the quota holds less; a successful attempt gives back
 *   its retry's cost, or 1 when it was the call's first attempt.
 * - `AwsRetry.adaptive`: the quota plus the client send-rate limiter, off until the first throttling
 *   answer (the simulated dependency's overload refusal), then a token bucket whose rate is cut to
 *   0.7 × the measured send rate on each throttling answer and recovers along a cubic curve.
 *
 * In the simulator a retry the quota refuses fails with a `RateLimitedError` without reaching the
 * dependency (the call ends there, as the SDK ends it with the last error), and an attempt waits on
 * the virtual clock for a send token. The policy's attempts and backoff stay the policy's. A model
 * for comparison, not a policy option.
 */
export class AwsRetry {
  /** The standard mode: the retry quota. */
  static readonly standard = new AwsRetry('standard');
  /** The adaptive mode: the retry quota and the CUBIC client send-rate limiter. */
  static readonly adaptive = new AwsRetry('adaptive');

  private constructor(
    /** Which mode. */
    readonly mode: AwsRetryMode,
  ) {}

  /** `AWS standard retry quota` or `AWS adaptive retry (quota + send-rate limiter)`. */
  toString(): string {
    return this.mode === 'standard'
      ? 'AWS standard retry quota'
      : 'AWS adaptive retry (quota + send-rate limiter)';
  }

  /** A live client for one run. @internal used by the simulator. */
  start(clock: Clock): LiveAwsRetry {
    return new LiveAwsRetry(this.mode === 'adaptive' ? new CubicRateLimiter(clock) : undefined);
  }
}

/** Sends one attempt of a call through the quota and the limiter. @internal */
export type AwsAttempt = (
  attempt: number,
  signal: AbortSignal | undefined,
  send: (signal: AbortSignal | undefined) => Promise<void>,
) => Promise<void>;

/** Whether the SDK would count `error` as a timeout (the costlier retry). */
const isTimeout = (error: unknown): boolean =>
  error instanceof DependencyTimeoutError || error instanceof AttemptTimeoutError;

/**
 * A running {@link AwsRetry}: one quota (and limiter) for every call of a run.
 * @internal the simulator's.
 */
export class LiveAwsRetry {
  /** The client's retry quota. */
  readonly quota = new AwsRetryQuota();
  /** Retries the quota refused so far. */
  refusedRetries = 0;

  constructor(
    /** The send-rate limiter of the adaptive mode. */
    readonly limiter: CubicRateLimiter | undefined,
  ) {}

  /** The attempts of one call: it remembers whether its last attempt timed out and what its retry cost. */
  call(): AwsAttempt {
    let afterTimeout = false;
    let held = 0;
    const quota = this.quota;
    const limiter = this.limiter;
    const succeeded = (): void => {
      quota.release(held);
      limiter?.update(false);
    };
    const failed = (error: unknown): never => {
      afterTimeout = isTimeout(error);
      limiter?.update(error instanceof DependencyOverloadedError);
      throw error;
    };
    return (attempt, signal, send) => {
      if (attempt > 1) {
        held = quota.acquire(afterTimeout);
        if (held === 0) {
          this.refusedRetries++;
          return Promise.reject(AWS_QUOTA_REFUSAL);
        }
      }
      const go = (): Promise<void> => send(signal).then(succeeded, failed);
      const wait = limiter?.acquire(signal);
      return wait === undefined ? go() : wait.then(go);
    };
  }
}
