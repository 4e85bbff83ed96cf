import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import { parseDuration } from '../config/index.js';
import { constInitializer } from './ast.js';

type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/**
 * The value of `node` when it is known without running the code: a number (`2_000`, `5 * 1000`,
 * `-1`), a string, a boolean, `null`, or a `const` identifier initialized with one of those.
 * @internal
 */
export function staticValue(
  context: Context,
  node: TSESTree.Node | undefined,
): number | string | boolean | null | undefined {
  if (node === undefined) return undefined;
  switch (node.type) {
    case 'Literal':
      return typeof node.value === 'number' ||
        typeof node.value === 'string' ||
        typeof node.value === 'boolean' ||
        node.value === null
        ? node.value
        : undefined;
    case 'TemplateLiteral':
      return node.expressions.length === 0
        ? (node.quasis[0]?.value.cooked ?? undefined)
        : undefined;
    case 'UnaryExpression': {
      const value = staticValue(context, node.argument);
      if (typeof value !== 'number') return undefined;
      return node.operator === '-' ? -value : node.operator === '+' ? value : undefined;
    }
    case 'BinaryExpression': {
      if (node.left.type === 'PrivateIdentifier') return undefined;
      const left = staticValue(context, node.left);
      const right = staticValue(context, node.right);
      if (typeof left !== 'number' || typeof right !== 'number') return undefined;
      if (node.operator === '*') return left * right;
      if (node.operator === '+') return left + right;
      if (node.operator === '-') return left - right;
      if (node.operator === '/') return left / right;
      return undefined;
    }
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
    case 'TSNonNullExpression':
      return staticValue(context, node.expression);
    case 'Identifier': {
      const init = constInitializer(context, node);
      return init === undefined || init.type === 'Identifier'
        ? undefined
        : staticValue(context, init);
    }
    default:
      return undefined;
  }
}

/**
 * A duration in milliseconds read by the config's own parser: a number is ms, a string as in config
 * (`"250ms"`, `"10s"`, `"2m"`; a bare `"250"` is ms). `undefined` when not statically known or not a
 * valid duration (the config validator reports those).
 * @internal
 */
export function staticDuration(
  context: Context,
  node: TSESTree.Node | undefined,
): number | undefined {
  const value = staticValue(context, node);
  if (typeof value !== 'number' && typeof value !== 'string') return undefined;
  try {
    return parseDuration(value, 'duration');
  } catch {
    return undefined;
  }
}
