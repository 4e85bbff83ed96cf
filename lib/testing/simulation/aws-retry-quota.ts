/**
 * The numbers of the AWS SDKs' standard-mode retry quota, as `@smithy/util-retry` sets them
 * (`INITIAL_RETRY_TOKENS`, `RETRY_COST`, `TIMEOUT_RETRY_COST`, `NO_RETRY_INCREMENT`).
 */
export const AWS_RETRY_QUOTA = Object.freeze({
  /** Tokens the quota starts with, and the most it holds. */
  capacity: 500,
  /** Tokens a retry after an error other than a timeout costs. */
  retryCost: 5,
  /** Tokens a retry after a timeout costs. */
  timeoutRetryCost: 10,
  /** Tokens a call that succeeds at its first attempt adds. */
  noRetryIncrement: 1,
});

/**
 * The AWS SDKs' standard-mode retry quota, one per client: a retry is made only while the quota holds
 * its cost (10 after a timeout, else 5), which it then spends; an attempt that succeeds gives back
 * what its own retry cost, or 1 when it was the call's first attempt; the quota never exceeds 500.
 * A failed retry gives nothing back, so about 100 retries after errors in a row empty a full quota.
 * @internal the simulator's reference model (`AwsRetry`).
 */
export class AwsRetryQuota {
  /** Tokens available now. */
  available: number = AWS_RETRY_QUOTA.capacity;

  /**
   * Spends the cost of one retry if the quota holds it.
   * @param afterTimeout whether the attempt being retried timed out
   * @returns the tokens spent (what a success of the retry gives back), or 0 when the quota refuses
   */
  acquire(afterTimeout: boolean): number {
    const cost = afterTimeout ? AWS_RETRY_QUOTA.timeoutRetryCost : AWS_RETRY_QUOTA.retryCost;
    if (this.available < cost) return 0;
    this.available -= cost;
    return cost;
  }

  /**
   * Records a successful attempt.
   * @param cost what the attempt's retry spent (from {@link acquire}), 0 for a call's first attempt
   */
  release(cost: number): void {
    this.available = Math.min(
      AWS_RETRY_QUOTA.capacity,
      this.available + (cost > 0 ? cost : AWS_RETRY_QUOTA.noRetryIncrement),
    );
  }
}
