import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import { calledMethod, findProperty, isIdentifier, keyName, propertyName } from '../ast.js';
import { defineRule } from '../rule.js';
import { staticDuration, staticValue } from '../static-value.js';

type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/** A backoff curve as far as it is known from the source (DESIGN §3.4); delays in ms. */
interface Curve {
  readonly base: number;
  readonly factor: number;
  readonly maximum: number;
  /** Mean of the jitter as a share of the computed delay: full 0.5, equal 0.75, none 1. */
  readonly jitterMean: number;
}

/** What one object literal (merged over its preset and config defaults) says about the call's time. */
interface Bounds {
  attempts?: number;
  deadline?: number | null;
  attemptTimeout?: number | null;
  backoff?: Curve;
}

const DEFAULT_CURVE: Curve = { base: 100, factor: 2, maximum: 30_000, jitterMean: 0.5 };
const NO_DELAY: Curve = { base: 0, factor: 1, maximum: 0, jitterMean: 1 };
const JITTER_MEAN: Record<string, number> = { full: 0.5, equal: 0.75, none: 1 };
/** What `Resilience.<preset>` and config `preset: '<name>'` start from (DESIGN §3.1). */
const PRESETS: Record<string, Bounds> = {
  default: { attempts: 3, deadline: null, attemptTimeout: null, backoff: DEFAULT_CURVE },
  http: { attempts: 3, deadline: 30_000, attemptTimeout: null, backoff: DEFAULT_CURVE },
};

function jitterMean(context: Context, node: TSESTree.Node | undefined): number | undefined {
  if (node === undefined) return 0.5;
  const name =
    node.type === 'MemberExpression' && isIdentifier(node.object, 'Jitter')
      ? propertyName(node)
      : staticValue(context, node);
  return typeof name === 'string' ? JITTER_MEAN[name] : undefined;
}

/** Exponential settings from `Backoff.exponential({...})` or a config `backoff: {...}` object. */
function exponential(
  context: Context,
  options: TSESTree.ObjectExpression | undefined,
): Curve | undefined {
  const read = (name: string): TSESTree.Node | undefined =>
    options === undefined ? undefined : findProperty(options, name)?.value;
  const base =
    read('transientBase') === undefined ? 100 : staticDuration(context, read('transientBase'));
  const factorValue = read('factor') === undefined ? 2 : staticValue(context, read('factor'));
  const maximum =
    read('maximumDelay') === undefined ? 30_000 : staticDuration(context, read('maximumDelay'));
  const mean = jitterMean(context, read('jitter'));
  if (
    base === undefined ||
    typeof factorValue !== 'number' ||
    maximum === undefined ||
    mean === undefined
  )
    return undefined;
  return { base, factor: factorValue, maximum, jitterMean: mean };
}

/** The backoff curve a `backoff` value describes, or undefined when it is not statically known. */
function curveOf(context: Context, node: TSESTree.Node): Curve | undefined {
  if (
    node.type === 'MemberExpression' &&
    isIdentifier(node.object, 'Backoff') &&
    propertyName(node) === 'none'
  )
    return NO_DELAY;
  if (
    node.type === 'CallExpression' &&
    node.callee.type === 'MemberExpression' &&
    isIdentifier(node.callee.object, 'Backoff')
  ) {
    const kind = calledMethod(node);
    const argument = node.arguments[0];
    if (kind === 'exponential')
      return argument === undefined || argument.type === 'ObjectExpression'
        ? exponential(context, argument)
        : undefined;
    if (kind === 'constant') {
      const delay = staticDuration(context, argument);
      return delay === undefined
        ? undefined
        : { base: delay, factor: 1, maximum: delay, jitterMean: 1 };
    }
    return undefined;
  }
  if (node.type === 'ObjectExpression') {
    const type =
      findProperty(node, 'type') === undefined
        ? 'exponential'
        : staticValue(context, findProperty(node, 'type')!.value);
    if (type === 'none') return NO_DELAY;
    if (type === 'constant') {
      const delay = staticDuration(context, findProperty(node, 'delay')?.value);
      return delay === undefined
        ? undefined
        : { base: delay, factor: 1, maximum: delay, jitterMean: 1 };
    }
    return type === 'exponential' ? exponential(context, node) : undefined;
  }
  return undefined;
}

/** The bounds one object literal states (only the keys it has; unknown values make a key unknown). */
function boundsOf(
  context: Context,
  object: TSESTree.ObjectExpression,
): Bounds & { known: Set<keyof Bounds> } {
  const bounds: Bounds & { known: Set<keyof Bounds> } = { known: new Set() };
  const attempts = findProperty(object, 'attempts');
  if (attempts !== undefined) {
    const value = staticValue(context, attempts.value);
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1) bounds.attempts = value;
    bounds.known.add('attempts');
  }
  for (const key of ['deadline', 'attemptTimeout'] as const) {
    const property = findProperty(object, key);
    if (property === undefined) continue;
    const value = staticValue(context, property.value);
    bounds[key] =
      value === null || isIdentifier(property.value, 'undefined')
        ? null
        : staticDuration(context, property.value);
    bounds.known.add(key);
  }
  const backoff = findProperty(object, 'backoff');
  if (backoff !== undefined) {
    bounds.backoff = curveOf(context, backoff.value);
    bounds.known.add('backoff');
  }
  return bounds;
}

function merge(base: Bounds, over: Bounds & { known: Set<keyof Bounds> }): Bounds {
  const merged: Bounds = { ...base };
  for (const key of over.known) (merged as Record<string, unknown>)[key] = over[key];
  return merged;
}

/** Mean delay before retry `n` (1-based), as the executor computes it (DESIGN §3.4). */
function meanDelay(curve: Curve, n: number): number {
  return Math.min(curve.maximum, curve.base * curve.factor ** (n - 1)) * curve.jitterMean;
}

/** How the object literal is used: as policy options, a Nest policy config, or neither. */
function roleOf(
  object: TSESTree.ObjectExpression,
): { preset?: string; defaults?: TSESTree.ObjectExpression } | undefined {
  const parent = object.parent;
  // `Resilience.http.with({...})`, `policy.with({...})`
  if (
    parent?.type === 'CallExpression' &&
    parent.arguments[0] === object &&
    calledMethod(parent) === 'with'
  ) {
    const receiver = (parent.callee as TSESTree.MemberExpression).object;
    const preset =
      receiver.type === 'MemberExpression' && isIdentifier(receiver.object, 'Resilience')
        ? propertyName(receiver)
        : undefined;
    return { preset: preset !== undefined && preset in PRESETS ? preset : undefined };
  }
  // `const options: PolicyOptions = {...}` / `PolicyConfig`
  if (parent?.type === 'VariableDeclarator' && parent.init === object) {
    const type = parent.id.typeAnnotation?.typeAnnotation;
    if (
      type?.type === 'TSTypeReference' &&
      type.typeName.type === 'Identifier' &&
      (type.typeName.name === 'PolicyOptions' || type.typeName.name === 'PolicyConfig')
    )
      return {};
    return undefined;
  }
  if (parent?.type !== 'Property' || parent.value !== object) return undefined;
  const container = parent.parent;
  // `{ defaults: {...} }` of a Nest config
  if (
    keyName(parent.key) === 'defaults' &&
    container?.type === 'ObjectExpression' &&
    findProperty(container, 'policies') !== undefined
  )
    return { preset: 'default' };
  // `{ policies: { payments: {...} } }`
  const holder = container?.parent;
  if (
    container?.type === 'ObjectExpression' &&
    holder?.type === 'Property' &&
    keyName(holder.key) === 'policies' &&
    holder.value === container
  ) {
    const config = holder.parent;
    const defaults =
      config?.type === 'ObjectExpression' ? findProperty(config, 'defaults')?.value : undefined;
    return {
      preset: 'default',
      defaults: defaults?.type === 'ObjectExpression' ? defaults : undefined,
    };
  }
  return undefined;
}

/**
 * Flags policy options whose deadline cannot hold the attempts they ask for: `attemptTimeout` at or
 * above `deadline` (the first slow attempt always uses the whole call), or a deadline that passes
 * before the last attempt could start when every attempt before it times out (attempts × timeout plus
 * the mean backoff of DESIGN §3.4). Reads `.with({...})` options, `PolicyOptions`/`PolicyConfig`
 * literals and Nest config objects (`policies.<name>`, merged over `defaults` and the preset); only
 * values known from the source are used.
 */
export const deadlineFitsAttempts = defineRule<'timeoutNotShorter' | 'attemptsCut', []>({
  name: 'deadline-fits-attempts',
  description:
    'A deadline must leave room for the attempts, attempt timeouts and backoff it is given',
  messages: {
    timeoutNotShorter:
      'attemptTimeout ({{timeout}} ms) is not shorter than deadline ({{deadline}} ms): a slow first attempt uses the whole call and no retry can follow. ' +
      'Make attemptTimeout shorter than the deadline (about deadline / attempts) or drop one of them.',
    attemptsCut:
      'deadline {{deadline}} ms passes before attempt {{attempts}} can start when attempts time out ({{retries}} × attemptTimeout {{timeout}} ms + backoff ≈ {{backoff}} ms = {{needed}} ms): ' +
      'only {{fits}} of the {{attempts}} attempts can run. Raise deadline above {{needed}} ms, shorten attemptTimeout, or set attempts to {{fits}}.',
  },
  defaultOptions: [],
  create(context) {
    return {
      ObjectExpression(object) {
        const role = roleOf(object);
        if (role === undefined) return;
        const own = boundsOf(context, object);
        if (
          !own.known.has('deadline') &&
          !own.known.has('attemptTimeout') &&
          !own.known.has('attempts')
        )
          return;
        const presetName =
          findProperty(object, 'preset') === undefined
            ? role.preset
            : staticValue(context, findProperty(object, 'preset')!.value);
        let bounds: Bounds =
          typeof presetName === 'string' && presetName in PRESETS ? PRESETS[presetName]! : {};
        if (role.defaults !== undefined) bounds = merge(bounds, boundsOf(context, role.defaults));
        bounds = merge(bounds, own);
        const { deadline, attemptTimeout, attempts } = bounds;
        if (typeof deadline !== 'number' || typeof attemptTimeout !== 'number') return;
        const where =
          findProperty(object, 'attemptTimeout') ?? findProperty(object, 'deadline') ?? object;
        if (attemptTimeout >= deadline) {
          context.report({
            node: where,
            messageId: 'timeoutNotShorter',
            data: { timeout: attemptTimeout, deadline },
          });
          return;
        }
        if (attempts === undefined) return;
        const curve = bounds.backoff ?? NO_DELAY;
        // Start of attempt k when every attempt before it ran to its timeout; it grows with k.
        let start = 0;
        let backoff = 0;
        let fits = 1;
        for (let k = 2; k <= attempts; k++) {
          const delay = meanDelay(curve, k - 1);
          start += attemptTimeout + delay;
          backoff += delay;
          if (start < deadline) fits = k;
        }
        if (fits >= attempts) return;
        context.report({
          node: findProperty(object, 'deadline') ?? where,
          messageId: 'attemptsCut',
          data: {
            deadline,
            attempts,
            retries: attempts - 1,
            timeout: attemptTimeout,
            backoff: Math.round(backoff),
            needed: Math.round(start),
            fits,
          },
        });
      },
    };
  },
});
