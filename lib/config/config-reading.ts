import ms from 'ms';
import { PolicyConfigError } from '../core/index.js';
import { isPlainObject, NAME_RULE, sectionRule, type ValueRule } from '../core/internal.js';

/**
 * How the config parser reads JSON/YAML-shaped values: every problem collected with its full path,
 * sections read as plain objects by their own properties only, durations converted from `"10s"`
 * strings before the core's rule judges them. The rules themselves are the core's
 * (`lib/core/rules/option-rules.ts`).
 * @internal
 */

/** How config may write a duration, appended to a duration rule's words. */
export const DURATION_FORMAT = 'written as a ms number or a string such as "250ms", "10s", "2m"';

/** The problems found so far, each a `PolicyConfigError` named by its full path. */
export class Problems {
  readonly list: PolicyConfigError[] = [];

  /** Records a problem; returns `undefined` so a reader can `return problems.add(...)`. */
  add(field: string, value: unknown, rule: string): undefined {
    this.list.push(new PolicyConfigError(field, value, rule));
    return undefined;
  }

  /** Records problems found elsewhere (a core check, a nested reader). */
  addAll(found: readonly PolicyConfigError[]): void {
    this.list.push(...found);
  }

  /** `value` if `rule` accepts it, otherwise `undefined` with the problem recorded at `path`. */
  check<T>(rule: ValueRule<T>, path: string, value: unknown): T | undefined {
    return rule.accepts(value) ? value : this.add(path, value, rule.rule);
  }
}

/**
 * `path.key` (`key` at the root); a key that is no plain name (empty, spaces, dots, brackets) is
 * quoted, `path["a key"]`, so every path names exactly one place and none is empty.
 */
export function join(path: string, key: string): string {
  if (!/^[A-Za-z_$][\w$-]*$/.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * A section's own fields as a null-prototype object (so nothing inherited, not even from a polluted
 * `Object.prototype`, is ever read), or `undefined` with a problem when it is not a plain object
 * (`rule` words a value that is no object at all; a `Map`, `Date`, array or class instance gets
 * the plain-object rule) or a getter throws.
 */
export function readObject(
  problems: Problems,
  value: unknown,
  path: string,
  rule: string,
): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) return problems.add(path, value, sectionRule(value, rule));
  const fields: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) {
    try {
      fields[key] = value[key];
    } catch (error) {
      problems.add(
        join(path, key),
        '[getter]',
        `could not be read: ${error instanceof Error ? error.message : 'its getter threw'}`,
      );
    }
  }
  return fields;
}

/**
 * Records every own key of `fields` not in `known` as a problem (`is not a known <what> key (…)`), or,
 * for a key of `explained` (an option that exists in code but has no config key), that key's rule.
 */
export function checkKeys(
  problems: Problems,
  fields: Record<string, unknown>,
  path: string,
  known: readonly string[],
  what: string,
  explained: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(fields)) {
    if (known.includes(key)) continue;
    problems.add(
      join(path, key),
      fields[key],
      Object.hasOwn(explained, key)
        ? explained[key]!
        : `is not a known ${what} key (${known.join(', ')})`,
    );
  }
}

/**
 * Whether a user-chosen name (a policy's, a classifier's) is valid; records a problem at `path`
 * naming it otherwise: `policies.__proto__: "__proto__" is invalid: a policy name must be …`.
 */
export function checkName(problems: Problems, name: string, path: string, what: string): boolean {
  if (NAME_RULE.accepts(name)) return true;
  problems.add(path, name, `a ${what} name ${NAME_RULE.rule}`);
  return false;
}

/**
 * Milliseconds from a config duration — a number of ms, or a string the `ms` package reads (a bare
 * `"250"` is ms) — or `undefined` when it is neither.
 */
export function durationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  try {
    const result: unknown = ms(value.trim() as ms.StringValue);
    return typeof result === 'number' ? result : undefined;
  } catch {
    return undefined;
  }
}

/** A duration judged by `rule` once converted to ms; `undefined` with the problem recorded otherwise. */
export function readDuration(
  problems: Problems,
  value: unknown,
  path: string,
  rule: ValueRule<number>,
): number | undefined {
  const result = durationMs(value);
  return result !== undefined && rule.accepts(result)
    ? result
    : problems.add(path, value, `${rule.rule}, ${DURATION_FORMAT}`);
}
