import { UsageError } from './usage-error.js';

/** One change of a `--compare` spec: a path into the policy's config and the value to put there. */
export interface ConfigChange {
  /** The config path below the policy, e.g. `['breaker', 'consecutiveFailures']`. */
  readonly path: readonly string[];
  /** The value, typed as config JSON would have it (number, boolean, null or string). */
  readonly value: unknown;
}

/** Fields whose `none` means "no bound" (`null` in config, DESIGN §4). */
const BOUNDS = new Set(['deadline', 'attemptTimeout']);

/**
 * Reads one `--compare` spec, comma-separated `field=value` pairs naming any field of a policy's
 * config by its dotted path: `budget=none`, `attempts=5`, `breaker.consecutiveFailures=10`,
 * `attemptTimeout=800ms`, `backoff.jitter=equal`. Values are read as config JSON: integers and
 * decimals become numbers, `true`/`on` and `false`/`off` booleans, `none` is `null` for `deadline`
 * and `attemptTimeout` and `false` for `breaker` (as in config, `budget: 'none'` stays a string);
 * anything else a string (durations such as `800ms` are strings the config parses). Whether the field
 * exists and the value fits is left to the config parser, which names the path and the rule.
 * @throws UsageError naming `--compare` for a pair without `=` or with an empty field name
 */
export function parseCompareSpec(spec: string): ConfigChange[] {
  return spec.split(',').map((pair) => {
    const eq = pair.indexOf('=');
    const field = pair.slice(0, eq).trim();
    if (eq <= 0 || field.split('.').some((part) => part === '')) {
      throw new UsageError(
        '--compare',
        spec,
        'must be field=value pairs separated by commas, e.g. budget=none,breaker.consecutiveFailures=10',
      );
    }
    const path = field.split('.');
    return { path, value: configValue(path, pair.slice(eq + 1).trim()) };
  });
}

function configValue(path: readonly string[], text: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'on') return true;
  if (text === 'false' || text === 'off') return false;
  if (text === 'none' && path.length === 1 && BOUNDS.has(path[0]!)) return null;
  if (text === 'none' && path.length === 1 && path[0] === 'breaker') return false;
  return text;
}

/**
 * A copy of `policy` (one policy's config object) with `changes` applied. Setting a field below a
 * value that is not an object (`breaker: true` then `breaker.consecutiveFailures=10`) starts from an
 * empty object there, which the config reads as "defaults plus this field".
 */
export function applyChanges(
  policy: Record<string, unknown>,
  changes: readonly ConfigChange[],
): Record<string, unknown> {
  const copy = structuredClone(policy);
  for (const { path, value } of changes) {
    let target = copy;
    for (const key of path.slice(0, -1)) {
      const next = target[key];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) target[key] = {};
      target = target[key] as Record<string, unknown>;
    }
    target[path.at(-1)!] = value;
  }
  return copy;
}
