import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import ms from 'ms';
import { constInitializer } from './ast.js';

type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/**
 * The value of `node` when it is known without running the code: a number (`2_000`, `5 * 1000`,
 * `-1`), a string, a boolean, `null`, or a `const` identifier initialized with one of those.
 * @internal
 */
export function staticValue(context: Context, node: TSESTree.Node | undefined): number | string | boolean | null | undefined {
  if (node === undefined) return undefined;
  switch (node.type) {
    case 'Literal':
      return typeof node.value === 'number' || typeof node.value === 'string' || typeof node.value === 'boolean' || node.value === null ? node.value : undefined;
    case 'TemplateLiteral':
      return node.expressions.length === 0 ? node.quasis[0]?.value.cooked ?? undefined : undefined;
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
      return init === undefined || init.type === 'Identifier' ? undefined : staticValue(context, init);
    }
    default:
      return undefined;
  }
}

/**
 * A duration in milliseconds as the policy would read it: a number is ms, a string is read like the
 * Nest config reads it (the `ms` package: `"250ms"`, `"10s"`, `"2m"`; a bare `"250"` is ms).
 * `undefined` when not statically known or not a valid duration.
 * @internal
 */
export function staticDuration(context: Context, node: TSESTree.Node | undefined): number | undefined {
  const value = staticValue(context, node);
  let result: number | undefined;
  if (typeof value === 'number') result = value;
  else if (typeof value === 'string') {
    try {
      result = ms(value.trim() as ms.StringValue);
    } catch {
      result = undefined;
    }
  }
  return typeof result === 'number' && Number.isFinite(result) && result >= 0 ? result : undefined;
}
