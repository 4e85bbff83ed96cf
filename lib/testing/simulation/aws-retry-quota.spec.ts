import { AWS_RETRY_QUOTA, AwsRetryQuota } from './aws-retry-quota.js';

describe("AwsRetryQuota (the AWS SDKs' standard retry quota, reference model)", () => {
  it("has the SDK's numbers: 500 tokens, 5 per retry, 10 after a timeout, 1 back per first-attempt success", () => {
    expect(AWS_RETRY_QUOTA).toEqual({
      capacity: 500,
      retryCost: 5,
      timeoutRetryCost: 10,
      noRetryIncrement: 1,
    });
  });

  it('spends 5 for a retry after an error, 10 after a timeout, and gives back what a successful retry cost', () => {
    const quota = new AwsRetryQuota();
    expect(quota.acquire(false)).toBe(5);
    expect(quota.available).toBe(495);
    expect(quota.acquire(true)).toBe(10);
    expect(quota.available).toBe(485);
    quota.release(10); // the retry after the timeout succeeded
    expect(quota.available).toBe(495);
    quota.release(0); // a call that succeeded at its first attempt
    expect(quota.available).toBe(496);
  });

  it('funds 100 retries after errors from full, then refuses without spending', () => {
    const quota = new AwsRetryQuota();
    for (let i = 0; i < 100; i++) expect(quota.acquire(false)).toBe(5);
    expect(quota.available).toBe(0);
    expect(quota.acquire(false)).toBe(0);
    expect(quota.available).toBe(0);
    for (let i = 0; i < 9; i++) quota.release(0);
    expect(quota.acquire(true)).toBe(0); // 9 < 10: no retry after a timeout
    expect(quota.acquire(false)).toBe(5); // 9 ≥ 5
    expect(quota.available).toBe(4);
  });

  it('never holds more than 500', () => {
    const quota = new AwsRetryQuota();
    quota.release(0);
    expect(quota.available).toBe(500);
    quota.acquire(false);
    quota.release(0);
    quota.release(5);
    expect(quota.available).toBe(500);
  });
});
