import type { TSESTree } from '@typescript-eslint/utils';
import {
  type FunctionNode,
  type Node,
  enclosingFunction,
  functionName,
  isIdentifier,
  propertyName,
  walk,
} from '../ast.js';
import { defineRule } from '../rule.js';

/** Reasons of a `CallRejectedError` that come from this process's own guards. */
const LOCAL_REASONS = new Set(['BudgetExhausted', 'DependencyUnavailable']);

type Loop = TSESTree.WhileStatement | TSESTree.DoWhileStatement | TSESTree.ForStatement;

/**
 * The retry loop the catch clause runs in: a `while`, `do…while` or `for (;;)` between it and its
 * function. `for…of`/`for…in` walk items (skipping one on a refusal is not a retry) and do not count.
 */
function retryLoop(clause: TSESTree.CatchClause, fn: FunctionNode | undefined): Loop | undefined {
  for (
    let current: Node | undefined = clause.parent;
    current != null && current !== fn;
    current = current.parent
  ) {
    if (
      current.type === 'WhileStatement' ||
      current.type === 'DoWhileStatement' ||
      current.type === 'ForStatement'
    )
      return current;
  }
  return undefined;
}

function endsWith(node: Node, name: string): boolean {
  return (
    isIdentifier(node, name) || (node.type === 'MemberExpression' && propertyName(node) === name)
  );
}

/** `e instanceof CallRejectedError`, `e.name === 'CallRejectedError'`, `e.reason === 'BudgetExhausted'` (and `!==`). */
function comparison(node: Node): 'is' | 'isNot' | undefined {
  if (node.type !== 'BinaryExpression') return undefined;
  if (node.operator === 'instanceof')
    return endsWith(node.right, 'CallRejectedError') ? 'is' : undefined;
  if (!['===', '==', '!==', '!='].includes(node.operator)) return undefined;
  const sides = [node.left, node.right];
  const literal = sides.find(
    (side): side is TSESTree.StringLiteral =>
      side.type === 'Literal' && typeof side.value === 'string',
  );
  const member = sides.find(
    (side): side is TSESTree.MemberExpression => side.type === 'MemberExpression',
  );
  if (literal === undefined || member === undefined) return undefined;
  const field = propertyName(member);
  const matches =
    (field === 'name' && literal.value === 'CallRejectedError') ||
    (field === 'reason' && LOCAL_REASONS.has(literal.value));
  if (!matches) return undefined;
  return node.operator.startsWith('!') ? 'isNot' : 'is';
}

/** Whether `test` selects rejections (`is`), everything but them (`isNot`), or does not look at them. */
function polarity(test: Node): 'is' | 'isNot' | undefined {
  if (test.type === 'UnaryExpression' && test.operator === '!') {
    const inner = polarity(test.argument);
    return inner === 'is' ? 'isNot' : inner === 'isNot' ? 'is' : undefined;
  }
  if (test.type === 'LogicalExpression') return polarity(test.left) ?? polarity(test.right);
  return comparison(test);
}

function contains(nodes: readonly Node[], test: (node: Node) => boolean): boolean {
  let found = false;
  for (const root of nodes) walk(root, (node) => (found ||= test(node)));
  return found;
}

/** The statements that run for a rejection, given the `if` that tests for it. */
function rejectedBranch(statement: TSESTree.IfStatement, which: 'is' | 'isNot'): Node[] {
  if (which === 'is') return [statement.consequent];
  if (statement.alternate) return [statement.alternate];
  // `if (!(e instanceof CallRejectedError)) throw e;` — what follows the `if` handles the rejection.
  const block = statement.parent;
  if (block?.type !== 'BlockStatement') return [];
  return block.body.slice(block.body.indexOf(statement) + 1);
}

function callsSelf(branch: readonly Node[], name: string | undefined): boolean {
  if (name === undefined) return false;
  return contains(branch, (node) => {
    if (node.type !== 'CallExpression') return false;
    const callee = node.callee;
    return (
      isIdentifier(callee, name) ||
      (callee.type === 'MemberExpression' &&
        callee.object.type === 'ThisExpression' &&
        propertyName(callee) === name)
    );
  });
}

/**
 * Flags code that catches a `CallRejectedError` (the retry budget or the breaker of this process
 * refused) and runs the call again: inside a `while`/`do`/`for (;;)` loop, a rejection branch that
 * neither throws, returns nor breaks goes round again; in any function, a rejection branch that calls
 * the function itself retries by recursion. Either way the refusal that was meant to shed load becomes
 * more load, and the budget is defeated (DESIGN §3.5). A branch that waits for the refusal's
 * `retryAfter` first is not flagged: asking again when the guard said a retry may succeed keeps to it.
 */
export const noRejectedCallRetry = defineRule<'loop' | 'recursion', []>({
  name: 'no-rejected-call-retry',
  description:
    'Do not retry a CallRejectedError: it is the retry budget or breaker of this process saying no',
  messages: {
    loop:
      "This loop retries a CallRejectedError: the refusal comes from this process's own retry budget or open breaker, and calling again at once adds the load they refused. " +
      'Let it propagate (the exception filter answers 503 with Retry-After), or stop and use a fallback.',
    recursion:
      "{{fn}} calls itself again after a CallRejectedError: the refusal comes from this process's own retry budget or open breaker, and calling again adds the load they refused. " +
      'Let it propagate (the exception filter answers 503 with Retry-After), or stop and use a fallback.',
  },
  defaultOptions: [],
  create(context) {
    return {
      CatchClause(clause) {
        const fn = enclosingFunction(clause);
        const loop = retryLoop(clause, fn);
        const name = fn === undefined ? undefined : functionName(fn);
        let reported = false;
        walk(clause.body, (node) => {
          if (reported || node.type !== 'IfStatement') return;
          const which = polarity(node.test);
          if (which === undefined) return;
          const branch = rejectedBranch(node, which);
          if (branch.length === 0) return;
          // Waiting out the refusal's `retryAfter` asks again when the guard said it may succeed.
          if (
            contains(
              branch,
              (n) => n.type === 'MemberExpression' && propertyName(n) === 'retryAfter',
            )
          )
            return;
          if (callsSelf(branch, name)) {
            reported = true;
            context.report({ node: node.test, messageId: 'recursion', data: { fn: name } });
            return;
          }
          const leaves = contains(
            branch,
            (n) =>
              n.type === 'ThrowStatement' ||
              n.type === 'ReturnStatement' ||
              n.type === 'BreakStatement',
          );
          if (loop !== undefined && !leaves) {
            reported = true;
            context.report({ node: node.test, messageId: 'loop' });
          }
        });
      },
    };
  },
});
