import { PolicyConfigError } from '../errors.js';
import {
  integerRule,
  isPlainObject,
  optionProblems,
  sectionRule,
  unboundedIntegerRule,
} from '../rules/value-rule.js';
import type { AdaptiveBounds } from './adaptive-limit.js';
import type { ResolvedRateSettings } from './rate-settings.js';

/** Options of `Limit.concurrency(n, options)`. */
export interface ConcurrencyLimitOptions {
  /**
   * Callers that may wait (FIFO) for a slot when all are taken, an integer >= 0 or `Infinity`;
   * beyond it a call is refused (Limited). A queued caller leaves at once when its signal aborts or
   * its deadline passes. Default 0 (no queue: refused at once, after the guarded pause).
   */
  queue?: number;
}

/** Options of `Limit.adaptive(options)`; every field is optional. */
export interface AdaptiveLimitOptions {
  /**
   * The limit to start from, an integer in [minimum, maximum]. Default 20 (Netflix concurrency-limits'
   * initial), moved into [minimum, maximum] when those are set.
   */
  initial?: number;
  /** The lowest the limit goes, an integer >= 1. Default 1. */
  minimum?: number;
  /** The highest the limit goes, an integer >= 1 and >= `minimum`. Default 200 (DESIGN §3.8), or `minimum` when that is higher. */
  maximum?: number;
  /** Callers that may wait for a slot, as in {@link ConcurrencyLimitOptions.queue}. Default 0. */
  queue?: number;
}

/** A concurrency limit's settings (fixed or adaptive), validated and filled in. */
export type ResolvedConcurrencySettings =
  | { readonly kind: 'concurrency'; readonly limit: number; readonly queue: number }
  | ({ readonly kind: 'adaptive'; readonly queue: number } & AdaptiveBounds);

/** A limit's settings, validated and filled in: a concurrency limit or a rate limit. */
export type ResolvedLimitSettings = ResolvedConcurrencySettings | ResolvedRateSettings;

/** The most concurrent calls a limit may allow (a library bound, against a typo: a duration in the count). */
export const MAXIMUM_LIMIT = 100_000;

/** Defaults of {@link AdaptiveLimitOptions}. */
export const ADAPTIVE_DEFAULTS = Object.freeze({ initial: 20, minimum: 1, maximum: 200, queue: 0 });

/** Rules of the limit settings, each written once (policy option, `Limit.*` and config). */
export const LIMIT_RULES = {
  limit: integerRule(1, MAXIMUM_LIMIT, 'calls in flight at once'),
  queue: unboundedIntegerRule(0),
  initial: integerRule(1, MAXIMUM_LIMIT, 'the limit it starts from'),
  minimum: integerRule(1, MAXIMUM_LIMIT, 'the lowest limit'),
  maximum: integerRule(1, MAXIMUM_LIMIT, 'the highest limit'),
} as const;

const CONCURRENCY_OPTION_RULES = { queue: LIMIT_RULES.queue };
const ADAPTIVE_OPTION_RULES = {
  initial: LIMIT_RULES.initial,
  minimum: LIMIT_RULES.minimum,
  maximum: LIMIT_RULES.maximum,
  queue: LIMIT_RULES.queue,
};

/**
 * Validates `Limit.concurrency(n, options)`.
 * @param field the path the errors name (`limit` from `with()`, `policies.x.limit` from config)
 * @throws PolicyConfigError naming `<field>.concurrency` or `<field>.queue`, the value and the rule
 */
export function concurrencySettings(
  limit: unknown,
  options: unknown,
  field: string,
): ResolvedConcurrencySettings {
  if (!LIMIT_RULES.limit.accepts(limit))
    throw new PolicyConfigError(`${field}.concurrency`, limit, LIMIT_RULES.limit.rule);
  const o = checkSection(
    options ?? {},
    CONCURRENCY_OPTION_RULES,
    field,
    'concurrency limit option',
    '{ queue? }',
  );
  return Object.freeze({ kind: 'concurrency', limit, queue: (o.queue as number | undefined) ?? 0 });
}

/**
 * Validates `Limit.adaptive(options)`: each field's rule, then `minimum <= initial <= maximum`.
 * @throws PolicyConfigError naming `<field>.<key>`, the value and the rule
 */
export function adaptiveSettings(options: unknown, field: string): ResolvedConcurrencySettings {
  const o = checkSection(
    options ?? {},
    ADAPTIVE_OPTION_RULES,
    field,
    'adaptive limit option',
    '{ initial?, minimum?, maximum?, queue? }',
  );
  const minimum = (o.minimum as number | undefined) ?? ADAPTIVE_DEFAULTS.minimum;
  const maximum = (o.maximum as number | undefined) ?? Math.max(ADAPTIVE_DEFAULTS.maximum, minimum);
  if (minimum > maximum)
    throw new PolicyConfigError(`${field}.minimum`, minimum, `must be <= maximum (${maximum})`);
  const given = o.initial as number | undefined;
  const initial = given ?? Math.min(maximum, Math.max(minimum, ADAPTIVE_DEFAULTS.initial));
  if (initial < minimum || initial > maximum)
    throw new PolicyConfigError(
      `${field}.initial`,
      initial,
      `must be in [minimum, maximum] ([${minimum}, ${maximum}])`,
    );
  return Object.freeze({
    kind: 'adaptive',
    initial,
    minimum,
    maximum,
    queue: (o.queue as number | undefined) ?? 0,
  });
}

function checkSection(
  value: unknown,
  rules: Record<string, (typeof LIMIT_RULES)[keyof typeof LIMIT_RULES]>,
  field: string,
  what: string,
  shape: string,
): Record<string, unknown> {
  if (!isPlainObject(value))
    throw new PolicyConfigError(field, value, sectionRule(value, `must be ${shape}`));
  const problems = optionProblems(value, rules, field, what);
  if (problems.length > 0) throw problems[0];
  return value;
}
