import { PolicyConfigError } from '../errors.js';
import {
  integerRule,
  isPlainObject,
  numberRule,
  optionProblems,
  sectionRule,
  valueRule,
} from '../rules/value-rule.js';
import type { RateStore } from './rate-store.js';

/** Options of `Limit.rate(options)`. */
export interface RateLimitOptions {
  /** Calls allowed per `per` ms, an integer in [1, 1000000]. */
  limit: number;
  /** The period `limit` counts over, in ms (> 0, at most a day). Config takes `'1s'`, `'1m'`. */
  per: number;
  /**
   * Calls that may start at once after a quiet spell (the bucket's capacity), an integer in [1, 1000000].
   * Default `limit` (a full period's worth, as resilience4j and Guava allow).
   */
  burst?: number;
  /**
   * How long a call may wait for its token instead of being refused, ms >= 0, bounded by its deadline
   * and ended by its signal. Default 0 (refused at once, after the guarded pause).
   */
  maximumWait?: number;
  /**
   * Shares the limit with every process using the same store and `key` (a fleet): tokens are leased
   * from the store in small batches and spent locally (see {@link RateStore}). Default none (this
   * process alone).
   */
  store?: RateStore;
  /**
   * Config's way to ask for `store`: `true` shares the limit through the store the application was
   * given (`ResilienceModule.forRoot({ redis })`); in code, pass `store`. Default false.
   */
  shared?: boolean;
  /** The shared bucket's name in the store. Default the policy's name (required without one). */
  key?: string;
  /**
   * Processes expected to share the limit: while the store cannot be reached, each one runs on a local
   * bucket of `limit / expectedInstances` (and `burst / expectedInstances`, at least 1). An integer
   * in [1, 10000]. Default 1.
   */
  expectedInstances?: number;
  /** Tokens asked of the store at a time, an integer in [1, 1000] (at most `burst`). Default 10. */
  lease?: number;
  /** The longest a call waits on the store for a lease before it is refused, ms in [0, 1000]. Default 5. */
  storeWait?: number;
  /** The longest one store request may take before the store counts as down, ms in [1, 60000]. Default 250. */
  storeTimeout?: number;
}

/** A rate limit's settings, validated and filled in. */
export interface ResolvedRateSettings {
  readonly kind: 'rate';
  readonly limit: number;
  readonly per: number;
  readonly burst: number;
  readonly maximumWait: number;
  /** Always 0: a rate limit has no slot queue (it waits for a token up to `maximumWait`). */
  readonly queue: 0;
  readonly store: RateStore | undefined;
  /** Whether the limit is shared (a store is given, or config asked for the application's). */
  readonly shared: boolean;
  readonly key: string | undefined;
  readonly expectedInstances: number;
  readonly lease: number;
  readonly storeWait: number;
  readonly storeTimeout: number;
}

/** The largest `limit` or `burst` of a rate limit. */
export const MAXIMUM_RATE = 1_000_000;

/** Defaults of the optional {@link RateLimitOptions} (burst defaults to `limit`). */
export const RATE_DEFAULTS = Object.freeze({
  maximumWait: 0,
  expectedInstances: 1,
  lease: 10,
  storeWait: 5,
  storeTimeout: 250,
});

/** Rules of the rate settings, each written once (`Limit.rate` and config). */
export const RATE_RULES = {
  limit: integerRule(1, MAXIMUM_RATE, 'calls per period'),
  per: numberRule(
    'must be a duration in ms > 0 and at most a day (86400000)',
    (v) => v > 0 && v <= 86_400_000,
  ),
  burst: integerRule(1, MAXIMUM_RATE, 'calls that may start at once'),
  maximumWait: numberRule('must be a finite duration in ms >= 0', (v) => v >= 0),
  store: valueRule<RateStore>(
    'must be a RateStore ({ name, take(request) }), e.g. new RedisRateStore(client)',
    (v) => typeof v === 'object' && v !== null && typeof (v as RateStore).take === 'function',
  ),
  shared: valueRule<boolean>('must be true or false', (v) => typeof v === 'boolean'),
  key: valueRule<string>(
    'must be a non-empty string',
    (v) => typeof v === 'string' && v.length > 0,
  ),
  expectedInstances: integerRule(1, 10_000, 'processes sharing the limit'),
  lease: integerRule(1, 1000, 'tokens asked of the store at a time'),
  storeWait: numberRule('must be a duration in ms in [0, 1000]', (v) => v >= 0 && v <= 1000),
  storeTimeout: numberRule('must be a duration in ms in [1, 60000]', (v) => v >= 1 && v <= 60_000),
} as const;

const SHAPE =
  '{ limit, per, burst?, maximumWait?, store?, shared?, key?, expectedInstances?, lease?, storeWait?, storeTimeout? }';

/**
 * Validates `Limit.rate(options)`.
 * @param field the path the errors name (`limit` from `with()`, `policies.x.limit` from config)
 * @throws PolicyConfigError naming `<field>.rate.<key>`, the value and the rule (a missing `limit` or
 *   `per`, an unknown key, a store that is not one, `lease` above `burst`)
 */
export function rateSettings(options: unknown, field: string): ResolvedRateSettings {
  const path = `${field}.rate`;
  if (!isPlainObject(options))
    throw new PolicyConfigError(path, options, sectionRule(options, `must be ${SHAPE}`));
  const problems = optionProblems(options, RATE_RULES, path, 'rate limit option');
  if (problems.length > 0) throw problems[0];
  if (options.limit === undefined)
    throw new PolicyConfigError(
      `${path}.limit`,
      undefined,
      `is required: ${RATE_RULES.limit.rule}`,
    );
  if (options.per === undefined)
    throw new PolicyConfigError(`${path}.per`, undefined, `is required: ${RATE_RULES.per.rule}`);
  const o = options as unknown as RateLimitOptions;
  const burst = o.burst ?? o.limit;
  const lease = o.lease ?? Math.min(RATE_DEFAULTS.lease, burst);
  if (lease > burst)
    throw new PolicyConfigError(
      `${path}.lease`,
      lease,
      `must be <= burst (${burst}): a lease larger than the bucket is never granted whole`,
    );
  return Object.freeze({
    kind: 'rate',
    limit: o.limit,
    per: o.per,
    burst,
    maximumWait: o.maximumWait ?? RATE_DEFAULTS.maximumWait,
    queue: 0,
    store: o.store,
    shared: o.store !== undefined || o.shared === true,
    key: o.key,
    expectedInstances: o.expectedInstances ?? RATE_DEFAULTS.expectedInstances,
    lease,
    storeWait: o.storeWait ?? RATE_DEFAULTS.storeWait,
    storeTimeout: o.storeTimeout ?? RATE_DEFAULTS.storeTimeout,
  });
}
