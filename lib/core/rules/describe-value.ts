/**
 * How a value is shown in an error message (`<path>: <value> is invalid: <rule>`). It never throws —
 * whatever the value (null-prototype objects, BigInt, symbols, cycles, getters that throw, proxies) —
 * and it keeps apart what JSON would merge: `3n`, `3` and `"3"`; `NaN` and `null`; a `Map` or a
 * `Date` and the plain object a config wanted.
 */
export function describeValue(value: unknown): string {
  try {
    const text = describe(value, 0, new Set());
    return text.length > MAXIMUM_LENGTH ? `${text.slice(0, MAXIMUM_LENGTH - 1)}…` : text;
  } catch {
    // A proxy trap or a patched prototype method threw: say so rather than lose the original error.
    return '[a value that cannot be shown]';
  }
}

/** Longer descriptions are cut: an error message names a value, it does not dump it. */
const MAXIMUM_LENGTH = 200;
/** Nesting shown before `{…}` / `[…]`. */
const MAXIMUM_DEPTH = 3;
/** Entries shown per object or array before `…`. */
const MAXIMUM_ENTRIES = 8;

function describe(value: unknown, depth: number, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${String(value)}n`;
    case 'symbol':
      return `Symbol(${value.description ?? ''})`;
    case 'function':
      return depth === 0 ? 'a function' : '[function]';
    case 'undefined':
    case 'boolean':
      return String(value);
  }
  if (value === null) return 'null';
  const object = value as object;
  if (seen.has(object)) return '[Circular]';
  if (Array.isArray(object)) return inside(object, seen, () => list(object, depth, seen));
  if (object instanceof Date)
    return `Date(${Number.isNaN(object.getTime()) ? 'invalid' : object.toISOString()})`;
  if (object instanceof RegExp) return `RegExp(${String(object)})`;
  if (object instanceof Map) return `Map(${object.size})`;
  if (object instanceof Set) return `Set(${object.size})`;
  const kind = kindOf(object);
  return inside(object, seen, () => `${kind}${fields(object, depth, seen)}`);
}

function inside(object: object, seen: Set<object>, show: () => string): string {
  seen.add(object);
  try {
    return show();
  } finally {
    seen.delete(object);
  }
}

function list(items: readonly unknown[], depth: number, seen: Set<object>): string {
  if (depth >= MAXIMUM_DEPTH) return '[…]';
  const shown = items.slice(0, MAXIMUM_ENTRIES).map((item) => describe(item, depth + 1, seen));
  if (items.length > MAXIMUM_ENTRIES) shown.push('…');
  return `[${shown.join(',')}]`;
}

function fields(object: object, depth: number, seen: Set<object>): string {
  if (depth >= MAXIMUM_DEPTH) return '{…}';
  const keys = Object.keys(object);
  const shown = keys
    .slice(0, MAXIMUM_ENTRIES)
    .map((key) => `${JSON.stringify(key)}:${field(object, key, depth, seen)}`);
  if (keys.length > MAXIMUM_ENTRIES) shown.push('…');
  return `{${shown.join(',')}}`;
}

function field(object: object, key: string, depth: number, seen: Set<object>): string {
  let value: unknown;
  try {
    value = (object as Record<string, unknown>)[key];
  } catch {
    return '[getter threw]';
  }
  return describe(value, depth + 1, seen);
}

/** `''` for a plain object (shown as JSON is), else what it is: `null-prototype `, `Foo `, `an object inheriting … `. */
function kindOf(object: object): string {
  const proto: unknown = Object.getPrototypeOf(object);
  if (proto === null) return '[null prototype] ';
  if (isRootPrototype(proto as object)) return '';
  const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof name === 'string' && name !== '' && name !== 'Object') return `${name} `;
  const inherited = Object.keys(proto as object);
  return inherited.length > 0
    ? `[inheriting ${inherited.slice(0, MAXIMUM_ENTRIES).join(', ')}] `
    : '[object with a prototype] ';
}

/**
 * Whether `proto` is a realm's `Object.prototype` (this one, or another realm's: Jest's VM contexts,
 * `vm.runInNewContext`, iframes), which plain objects and JSON values have.
 */
export function isRootPrototype(proto: object): boolean {
  return (
    proto === Object.prototype ||
    (Object.getPrototypeOf(proto) === null &&
      Object.hasOwn(proto, 'hasOwnProperty') &&
      Object.hasOwn(proto, 'isPrototypeOf'))
  );
}
