import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import {
  type FunctionNode,
  type Node,
  calledMethod,
  enclosingFunction,
  functionLabel,
  isIdentifier,
  isImmediatelyInvoked,
  keyName,
  methodOf,
  propertyName,
} from '../ast.js';
import { defineRule } from '../rule.js';

/** Methods that derive a new policy value from a preset. */
const BUILDERS = new Set(['with', 'withListener']);

/** Functions that run once per provider or application, where building a policy is right. */
const ONCE_PER_INSTANCE = new Set([
  'constructor',
  'onModuleInit',
  'onApplicationBootstrap',
  'useFactory',
]);

type What = 'preset' | 'scope' | 'budget';

/** `Resilience.<preset>.with(...)` (or withListener). */
function isPresetBuild(node: TSESTree.CallExpression): boolean {
  const method = calledMethod(node);
  if (method === undefined || !BUILDERS.has(method)) return false;
  const receiver = (node.callee as TSESTree.MemberExpression).object;
  return receiver.type === 'MemberExpression' && isIdentifier(receiver.object, 'Resilience');
}

function isBudgetBuild(node: TSESTree.CallExpression): boolean {
  return (
    node.callee.type === 'MemberExpression' &&
    isIdentifier(node.callee.object, 'RetryBudget') &&
    propertyName(node.callee) === 'of'
  );
}

function isScopeBuild(node: Node): node is TSESTree.NewExpression {
  return node.type === 'NewExpression' && isIdentifier(node.callee, 'PolicyScope');
}

/** The outermost expression of a builder chain starting at `node` (`Resilience.http.with(a).withListener(b)`). */
function chainEnd(node: Node): Node {
  let current = node;
  while (current.parent?.type === 'MemberExpression' && current.parent.object === current) {
    const member = current.parent;
    const name = propertyName(member);
    if (
      name === undefined ||
      !BUILDERS.has(name) ||
      member.parent?.type !== 'CallExpression' ||
      member.parent.callee !== member
    )
      break;
    current = member.parent;
  }
  return current;
}

/**
 * `x ??= build()` / `x ||= build()` / `x ?? (x = build())`, or `this.x = build()` under an `if` that
 * tests `this.x` (lazy rebuild when the source changed): built once, then reused.
 */
function isCached(
  context: Readonly<TSESLint.RuleContext<string, readonly unknown[]>>,
  node: Node,
  fn: FunctionNode,
): boolean {
  const parent = node.parent;
  if (parent?.type === 'AssignmentExpression' && parent.right === node) {
    if (parent.operator === '??=' || parent.operator === '||=') return true;
    if (
      parent.operator === '=' &&
      parent.left.type === 'MemberExpression' &&
      parent.left.object.type === 'ThisExpression'
    ) {
      const member = context.sourceCode.getText(parent.left);
      for (
        let current: Node | undefined = parent.parent;
        current != null && current !== fn;
        current = current.parent
      ) {
        if (
          current.type === 'IfStatement' &&
          context.sourceCode.getText(current.test).includes(member)
        )
          return true;
      }
    }
    const outer = parent.parent;
    return (
      outer?.type === 'LogicalExpression' &&
      outer.right === parent &&
      (outer.operator === '??' || outer.operator === '||')
    );
  }
  return false;
}

/** What the function returns directly: a factory that builds a policy for its caller to keep. */
function isReturned(node: Node, fn: FunctionNode): boolean {
  const parent = node.parent;
  if (parent?.type === 'ReturnStatement') return enclosingFunction(parent) === fn;
  return fn.type === 'ArrowFunctionExpression' && fn.body === node;
}

/**
 * `const p = build(); return () => p.run(...)`: a factory handing out closures that keep the value, so
 * it is built once per factory call and shared by every call of the closures. True when every read of
 * the variable is inside a function nested in `fn`.
 */
function onlyCapturedByClosures(
  context: Readonly<TSESLint.RuleContext<string, readonly unknown[]>>,
  node: Node,
  fn: FunctionNode,
): boolean {
  const declarator = node.parent;
  if (
    declarator?.type !== 'VariableDeclarator' ||
    declarator.init !== node ||
    declarator.id.type !== 'Identifier'
  )
    return false;
  const variable = context.sourceCode
    .getDeclaredVariables(declarator)
    .find((v) => v.name === (declarator.id as TSESTree.Identifier).name);
  const reads = variable?.references.filter((reference) => reference.isRead()) ?? [];
  return (
    reads.length > 0 && reads.every((reference) => enclosingFunction(reference.identifier) !== fn)
  );
}

/** The function whose every call would build the value, or undefined when it is built once. */
function perCallFunction(node: Node): FunctionNode | undefined {
  let fn = enclosingFunction(node);
  // A module-level IIFE runs once; follow it outward.
  while (fn !== undefined && isImmediatelyInvoked(fn)) fn = enclosingFunction(fn);
  if (fn === undefined) return undefined;
  const method = methodOf(fn);
  const name = method === undefined ? undefined : keyName(method.key);
  if (name !== undefined && ONCE_PER_INSTANCE.has(name)) return undefined;
  // A `useFactory` given as a property arrow: `{ useFactory: () => ... }`.
  if (fn.parent?.type === 'Property' && keyName(fn.parent.key) === 'useFactory') return undefined;
  return fn;
}

/** Inside the arguments of another builder: that one is judged (reported or allowed) instead. */
function insideBuilder(node: Node, fn: FunctionNode): boolean {
  for (let current = node.parent; current != null && current !== fn; current = current.parent) {
    if ((current.type === 'CallExpression' && isPresetBuild(current)) || isScopeBuild(current))
      return true;
  }
  return false;
}

/**
 * Flags a policy value, a `PolicyScope` or a `RetryBudget.of(...)` built inside a function body that
 * runs per call (a route handler, a service method): each call then starts with a full bucket, a closed
 * breaker and cold estimates, so the budget never limits anything and the breaker never trips.
 * Allowed: module level, class fields, constructors, `onModuleInit`/`onApplicationBootstrap`,
 * `useFactory`, module-level IIFEs, factories that return what they build or closures that keep it,
 * and `x ??= build()` caches.
 */
export const noPerCallPolicy = defineRule<'perCall', []>({
  name: 'no-per-call-policy',
  description:
    'Build policies, scopes and retry budgets once, not inside a function that runs per call',
  messages: {
    perCall:
      '{{what}} is built on every call of {{fn}}: its {{state}} start fresh each time, so the retry budget never limits retries and the breaker never trips. ' +
      'Build it once (a module-level constant, a class field or the constructor) or register it in ResilienceModule and use @InjectPolicy.',
  },
  defaultOptions: [],
  create(context) {
    function check(node: Node, what: What): void {
      const fn = perCallFunction(node);
      if (fn === undefined) return;
      if (what !== 'preset' && insideBuilder(node, fn)) return;
      const end = what === 'preset' ? chainEnd(node) : node;
      if (
        isCached(context, end, fn) ||
        isReturned(end, fn) ||
        onlyCapturedByClosures(context, end, fn)
      )
        return;
      const { label, state } = describe(what, node);
      context.report({
        node,
        messageId: 'perCall',
        data: { what: label, fn: functionLabel(fn), state },
      });
    }
    return {
      CallExpression(node) {
        if (isPresetBuild(node)) check(node, 'preset');
        else if (isBudgetBuild(node)) check(node, 'budget');
      },
      NewExpression(node) {
        if (isScopeBuild(node)) check(node, 'scope');
      },
    };
  },
});

function describe(what: What, node: Node): { label: string; state: string } {
  if (what === 'scope')
    return { label: 'new PolicyScope(...)', state: 'keys, their breakers and budgets' };
  if (what === 'budget') return { label: 'RetryBudget.of(...)', state: 'tokens' };
  const call = node as TSESTree.CallExpression;
  const preset =
    propertyName((call.callee as TSESTree.MemberExpression).object as TSESTree.MemberExpression) ??
    '…';
  return {
    label: `Resilience.${preset}.${calledMethod(call)}(...)`,
    state: 'retry budget, breaker and estimates',
  };
}
