import type { TSESTree } from '@typescript-eslint/utils';
import { findDecorator, methodLabel } from '../ast.js';
import { defineRule } from '../rule.js';

/** The identifier a parameter binds (`signal`, `signal?: AbortSignal`, `signal = undefined`). */
function boundIdentifier(parameter: TSESTree.Parameter): TSESTree.Identifier | undefined {
  if (parameter.type === 'Identifier') return parameter;
  if (parameter.type === 'AssignmentPattern' && parameter.left.type === 'Identifier')
    return parameter.left;
  return undefined;
}

/**
 * Flags an `@AttemptSignal()` parameter the method body never reads: the signal is what an attempt
 * timeout, the deadline or the caller's cancellation abort, and work that is not given it runs on
 * after the policy gave up (cancellation is cooperative, DESIGN §3.1). Any read counts as passing it
 * on (`fetch(url, { signal })`, `signal.throwIfAborted()`, handing it to a helper).
 */
export const attemptSignalPassed = defineRule<'unused', []>({
  name: 'attempt-signal-passed',
  description: 'An @AttemptSignal() parameter must be passed on to the work it is meant to cancel',
  messages: {
    unused:
      '@AttemptSignal() parameter `{{name}}` of {{method}} is never used: when an attempt times out, the deadline passes or the caller cancels, the work keeps running. ' +
      'Pass it to the I/O (fetch(url, { signal }), axios { signal }, a gRPC call option) or call {{name}}.throwIfAborted() between steps.',
  },
  defaultOptions: [],
  create(context) {
    return {
      MethodDefinition(method) {
        for (const parameter of method.value.params) {
          if (
            parameter.type === 'TSParameterProperty' ||
            findDecorator(parameter.decorators, 'AttemptSignal') === undefined
          )
            continue;
          const identifier = boundIdentifier(parameter);
          if (identifier === undefined) continue;
          const variable = context.sourceCode
            .getDeclaredVariables(method.value)
            .find((v) => v.name === identifier.name);
          const read = variable?.references.some(
            (reference) => reference.isRead() && reference.identifier !== identifier,
          );
          if (read) continue;
          context.report({
            node: identifier,
            messageId: 'unused',
            data: { name: identifier.name, method: methodLabel(method) },
          });
        }
      },
    };
  },
});
