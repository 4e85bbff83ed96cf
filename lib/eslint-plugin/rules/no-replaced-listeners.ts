import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import { calledMethod, constInitializer, findProperty, propertyName } from '../ast.js';
import { defineRule } from '../rule.js';

type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/** Methods that add a listener to the policy they are called on. */
const ADDERS = new Set(['withListener']);
/** Functions of `@nresilience/nestjs/telemetry` returning their first argument with a listener added. */
const ATTACHERS = new Set(['withTelemetry', 'withLogging']);
const FROM_MODULE = 'ResilienceModule attached telemetry and logging';

function unwrap(node: TSESTree.Node): TSESTree.Node {
  let current = node;
  while (
    current.type === 'TSAsExpression' ||
    current.type === 'TSNonNullExpression' ||
    current.type === 'TSSatisfiesExpression'
  )
    current = current.expression;
  return current;
}

/**
 * Why the policy `node` evaluates to already has listeners, or undefined when that is not known from
 * the source: a `withListener` (or an earlier `onEvent`) in its chain, a `withTelemetry(policy)` or
 * `withLogging(policy, logger)` call, or
 * a policy read from the Nest registry (`handle.current`, `registry.get(name)`).
 */
function listenersOf(context: Context, node: TSESTree.Node, depth = 4): string | undefined {
  const expression = unwrap(node);
  if (expression.type === 'Identifier') {
    const init = depth > 0 ? constInitializer(context, expression) : undefined;
    return init === undefined ? undefined : listenersOf(context, init, depth - 1);
  }
  if (expression.type === 'MemberExpression' && propertyName(expression) === 'current')
    return `a PolicyHandle's current policy (${FROM_MODULE})`;
  if (
    expression.type === 'CallExpression' &&
    expression.callee.type === 'Identifier' &&
    ATTACHERS.has(expression.callee.name)
  )
    return `${expression.callee.name}() attached listeners`;
  if (expression.type !== 'CallExpression' || expression.callee.type !== 'MemberExpression')
    return undefined;
  const method = calledMethod(expression);
  const receiver = expression.callee.object;
  if (method !== undefined && ADDERS.has(method)) return `.${method}() earlier in its chain`;
  if (method === 'with') {
    const options = expression.arguments[0];
    if (options?.type === 'ObjectExpression' && findProperty(options, 'onEvent') !== undefined)
      return 'an onEvent set earlier in its chain';
    return listenersOf(context, receiver, depth);
  }
  if (method === 'get' && /registry/i.test(context.sourceCode.getText(receiver)))
    return `a policy from PolicyRegistry (${FROM_MODULE})`;
  return undefined;
}

/** `onEvent: undefined`: removing the listeners is what it says. */
function isUndefined(property: TSESTree.Property): boolean {
  const value = unwrap(property.value);
  return (
    (value.type === 'Identifier' && value.name === 'undefined') ||
    (value.type === 'UnaryExpression' && value.operator === 'void')
  );
}

/**
 * Flags `policy.with({ onEvent })` on a policy that already has listeners: `onEvent` replaces the
 * policy's one listener, so the telemetry and logging that `withTelemetry()`, `withLogging()`,
 * `withListener()` or `ResilienceModule` attached stop without a word. `withListener(fn)` adds instead.
 * `onEvent: undefined` (removing them all, e.g. before `withListener` to replace them on purpose) is
 * not flagged.
 */
export const noReplacedListeners = defineRule<'replaces' | 'useWithListener', []>({
  name: 'no-replaced-listeners',
  description:
    'with({ onEvent }) replaces the listeners a policy already has; add one with withListener()',
  messages: {
    replaces:
      ".with({ onEvent }) replaces this policy's listeners ({{why}}): its telemetry and logging stop. Use .withListener(fn) to add a listener instead.",
    useWithListener: 'Use .withListener(...) to add the listener',
  },
  hasSuggestions: true,
  defaultOptions: [],
  create(context) {
    return {
      CallExpression(node) {
        if (calledMethod(node) !== 'with' || node.callee.type !== 'MemberExpression') return;
        const options = node.arguments[0];
        if (options?.type !== 'ObjectExpression') return;
        const onEvent = findProperty(options, 'onEvent');
        if (onEvent === undefined || isUndefined(onEvent)) return;
        const why = listenersOf(context, node.callee.object);
        if (why === undefined) return;
        const callee = node.callee;
        const alone = options.properties.length === 1;
        context.report({
          node: onEvent,
          messageId: 'replaces',
          data: { why },
          suggest: alone
            ? [
                {
                  messageId: 'useWithListener',
                  fix: (fixer) => [
                    fixer.replaceText(callee.property, 'withListener'),
                    fixer.replaceText(options, context.sourceCode.getText(onEvent.value)),
                  ],
                },
              ]
            : [],
        });
      },
    };
  },
});
