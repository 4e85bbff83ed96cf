import { PolicyConfigError } from '../errors.js';
import { isRootPrototype } from './describe-value.js';

/**
 * One validation rule, written once and used by every place that takes the value: `policy.with()`,
 * the budget, breaker and backoff factories, and the config parser (`lib/config`). The same rule
 * gives the same words whatever the path it is reported at (`budget.fraction` from `with()`,
 * `policies.payments.budget.fraction` from config).
 */
export interface ValueRule<T = unknown> {
  /** What the value must be, as the error message says it: `must be a number in [0, 1]`. */
  readonly rule: string;
  /** Whether `value` obeys the rule (`undefined` and `null` never do: callers decide what absent means). */
  accepts(value: unknown): value is T;
}

/** A rule from its words and its test. */
export function valueRule<T>(rule: string, test: (value: unknown) => boolean): ValueRule<T> {
  return {
    rule,
    accepts: (value): value is T => value !== undefined && value !== null && test(value),
  };
}

/** An integer in [min, max]. The words say `>= min` alone when `max` is unbounded. */
export function integerRule(min: number, max: number, meaning: string): ValueRule<number> {
  const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
  return valueRule(
    `must be an integer ${range}${meaning ? ` (${meaning})` : ''}`,
    (v) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max,
  );
}

/** An integer >= `min`, or `Infinity` for no bound (a capacity, a queue, a listing limit). */
export function unboundedIntegerRule(min: number): ValueRule<number> {
  return valueRule(
    `must be an integer >= ${min} (or Infinity)`,
    (v) => typeof v === 'number' && (v === Infinity || (Number.isInteger(v) && v >= min)),
  );
}

/** A finite number passing `test`, with the words given. */
export function numberRule(rule: string, test: (value: number) => boolean): ValueRule<number> {
  return valueRule(rule, (v) => typeof v === 'number' && Number.isFinite(v) && test(v));
}

/** One of a few strings. */
export function oneOfRule<T extends string>(
  names: readonly T[],
  rule = `must be ${names
    .map((n) => `'${n}'`)
    .join(', ')
    .replace(/, ([^,]*)$/, ' or $1')}`,
): ValueRule<T> {
  return valueRule(rule, (v) => typeof v === 'string' && (names as readonly string[]).includes(v));
}

/**
 * Checks `value` against `rule`.
 * @returns the value, typed
 * @throws PolicyConfigError naming `field`, the value and the rule when the rule refuses it
 */
export function checkValue<T>(rule: ValueRule<T>, field: string, value: unknown): T {
  if (!rule.accepts(value)) throw new PolicyConfigError(field, value, rule.rule);
  return value;
}

/**
 * `value` unless it is `undefined` (left out), then `fallback`. Never `??`: a `null` must reach the
 * rule and be refused, not silently become the default.
 */
export function given<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

/**
 * A plain object: an object literal, a JSON or YAML mapping, or `Object.create(null)` with no
 * inherited properties. Arrays, `Map`, `Date`, `RegExp`, class instances and objects inheriting
 * properties are not: reading them field by field would see "all defaults" (or inherited values).
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || isRootPrototype(proto as object);
}

/** The rule words for a section that is not a plain object. */
export const PLAIN_OBJECT_RULE =
  'must be a plain object (an object literal or a JSON/YAML mapping; not an array, Map, Date, RegExp, class instance or an object inheriting properties)';

/**
 * The rule words for a value given where a section (a plain object) or one of a few other forms was
 * expected: {@link PLAIN_OBJECT_RULE} for an object that is no plain one (a `Map`, `Date`, array or
 * class instance), `shape` (every form the value may take) for anything else.
 */
export function sectionRule(value: unknown, shape: string): string {
  return typeof value === 'object' && value !== null ? PLAIN_OBJECT_RULE : shape;
}

/**
 * Names that would reach `Object.prototype` if a name ever became a property key (`obj[name] = …`
 * in user code reading the config, a JSON dump, a bracket lookup): refused as policy names, shared
 * budget names, classifier names and config keys.
 */
export const RESERVED_NAMES: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** Rule of a name chosen by the user (policy, shared budget, classifier). */
export const NAME_RULE: ValueRule<string> = valueRule(
  `must be a non-empty string other than ${RESERVED_NAMES.join(', ')}`,
  (v) => typeof v === 'string' && v.trim().length > 0 && !RESERVED_NAMES.includes(v),
);

/**
 * The problems of one object of options against a table of rules, in key order: the object itself
 * when it is not a plain object; each own key not in `rules` (`is not a known <what> (<known>)`);
 * each own key whose value a rule refuses (`null` included). Only own properties are read. Keys
 * whose value is `undefined` are left out (absent).
 * @param value the options object as given
 * @param rules a rule per known key; `null` for a key known but checked elsewhere (by its caller)
 * @param path the path of the object (`breaker`, `policies.payments.breaker`); `''` for the root
 * @param what what the keys are, for the unknown-key rule (`breaker setting`)
 */
export function optionProblems(
  value: unknown,
  rules: Readonly<Record<string, ValueRule | null>>,
  path: string,
  what: string,
): PolicyConfigError[] {
  if (!isPlainObject(value))
    return [new PolicyConfigError(path || 'options', value, PLAIN_OBJECT_RULE)];
  const problems: PolicyConfigError[] = [];
  const known = Object.keys(rules);
  for (const key of Object.keys(value)) {
    const at = path ? `${path}.${key}` : key;
    const rule = Object.hasOwn(rules, key) ? rules[key] : undefined;
    if (rule === undefined)
      problems.push(
        new PolicyConfigError(at, value[key], `is not a known ${what} (${known.join(', ')})`),
      );
    else if (rule !== null && value[key] !== undefined && !rule.accepts(value[key]))
      problems.push(new PolicyConfigError(at, value[key], rule.rule));
  }
  return problems;
}

/** {@link optionProblems}, throwing the first. @throws PolicyConfigError */
export function checkOptions(
  value: unknown,
  rules: Readonly<Record<string, ValueRule | null>>,
  path: string,
  what: string,
): Record<string, unknown> {
  const problems = optionProblems(value, rules, path, what);
  if (problems.length > 0) throw problems[0];
  return value as Record<string, unknown>;
}
