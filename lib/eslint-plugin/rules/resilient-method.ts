import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import { className, decoratorName, findDecorator, findProperty, methodLabel } from '../ast.js';
import { defineRule } from '../rule.js';
import { staticValue } from '../static-value.js';

type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/** Return types `@Resilient` keeps: its Promise mode and its Observable mode (an `async *` method is in its iterable mode). */
const KEPT_RETURN_TYPES = new Set(['Promise', 'Observable']);

/** Class decorators that make Nest create (and so discover) the class's instances. */
const DEFAULT_MANAGED_BY = ['Injectable', 'Controller'];

interface Options {
  /** Class decorators besides `@Injectable()`/`@Controller()` under which Nest manages the class (e.g. `Resolver`). */
  classDecorators?: string[];
}

/** The `returns` option of `@Resilient(name, { returns })`, when written. */
function returnsOption(context: Context, decorator: TSESTree.Decorator): unknown {
  const call = decorator.expression;
  const options = call.type === 'CallExpression' ? call.arguments[1] : undefined;
  return options?.type === 'ObjectExpression'
    ? staticValue(context, findProperty(options, 'returns')?.value)
    : undefined;
}

function policyName(context: Context, decorator: TSESTree.Decorator): string {
  const call = decorator.expression;
  const name = call.type === 'CallExpression' ? staticValue(context, call.arguments[0]) : undefined;
  return typeof name === 'string' ? name : '…';
}

/** The rightmost name of a type reference (`Observable`, `rxjs.Observable` → `Observable`). */
function referenceName(type: TSESTree.TypeNode): string | undefined {
  if (type.type !== 'TSTypeReference') return undefined;
  const name = type.typeName;
  if (name.type === 'Identifier') return name.name;
  if (name.type === 'TSQualifiedName') return name.right.name;
  return undefined;
}

/** `true` when `name` is imported in this file with `import type` (so no runtime value exists for it). */
function isTypeOnlyImport(context: Context, node: TSESTree.Node, name: string): boolean {
  for (
    let scope: TSESLint.Scope.Scope | null = context.sourceCode.getScope(node);
    scope !== null;
    scope = scope.upper
  ) {
    const variable = scope.set.get(name);
    if (variable === undefined) continue;
    return variable.defs.some((def) => {
      if (def.type !== 'ImportBinding') return false;
      const specifier = def.node;
      const declaration = def.parent as TSESTree.ImportDeclaration | null;
      return (
        declaration?.importKind === 'type' ||
        (specifier.type === 'ImportSpecifier' && specifier.importKind === 'type')
      );
    });
  }
  return false;
}

/**
 * Flags `@Resilient` where it cannot do what it promises: on a method declared to return neither a
 * Promise nor an Observable (the wrapper turns it into a Promise-returning method, so a caller
 * expecting a plain value gets a Promise), on a non-async method without a declared return type (the
 * mode is chosen from the declared type), on an `Observable` return type imported with `import type`
 * (TypeScript then emits `Object` as the design type and the Observable mode is lost), and on a
 * method of a class Nest does not create (no `@Injectable()`/`@Controller()`), whose instances the
 * module never binds to its registry.
 */
export const resilientMethod = defineRule<
  'notPromise' | 'undeclared' | 'typeOnlyObservable' | 'unmanagedClass',
  [Options]
>({
  name: 'resilient-method',
  description:
    '@Resilient belongs on Promise- or Observable-returning methods of @Injectable()/@Controller() classes',
  messages: {
    notPromise:
      "@Resilient('{{policy}}') on {{method}}: its declared return type {{type}} is neither a Promise nor an Observable, so the wrapper silently makes it async (callers get Promise<{{type}}>). " +
      'Declare Promise<{{type}}> (and make it async) or return an Observable.',
    undeclared:
      "@Resilient('{{policy}}') on {{method}}: the method is not async and has no declared return type, so @Resilient cannot tell the Promise mode from the Observable mode. " +
      "Declare the return type (Promise<T> or Observable<T>) or pass { returns: 'promise' | 'observable' }.",
    typeOnlyObservable:
      "@Resilient('{{policy}}') on {{method}}: Observable is imported with `import type`, so TypeScript emits Object as the return type and the call runs in the Promise mode. " +
      "Import Observable as a value (import { Observable } from 'rxjs') or pass { returns: 'observable' }.",
    unmanagedClass:
      "@Resilient('{{policy}}') on {{method}}: {{class}} has no @Injectable() or @Controller(), so Nest never creates it and the module never binds it to its policies. " +
      'Add @Injectable() and register it as a provider.',
  },
  schema: [
    {
      type: 'object',
      properties: {
        classDecorators: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      },
      additionalProperties: false,
    },
  ],
  defaultOptions: [{}],
  create(context) {
    const managedBy = new Set([
      ...DEFAULT_MANAGED_BY,
      ...(context.options[0]?.classDecorators ?? []),
    ]);
    const reportedClasses = new Set<TSESTree.Node>();
    return {
      MethodDefinition(method) {
        const decorator = findDecorator(method.decorators, 'Resilient');
        if (decorator === undefined) return;
        const owner = method.parent.parent;
        const label = methodLabel(method);
        const policy = policyName(context, decorator);
        const returns = returnsOption(context, decorator);
        const declared = method.value.returnType?.typeAnnotation;
        // An `async *` method (or `returns: 'iterable'`) is in the iterable mode: it stays an AsyncIterable.
        const iterable = (method.value.async && method.value.generator) || returns === 'iterable';
        if (iterable) {
          // Nothing to check of its return type.
        } else if (declared === undefined) {
          if (!method.value.async && returns === undefined)
            context.report({
              node: method.key,
              messageId: 'undeclared',
              data: { policy, method: label },
            });
        } else {
          const name = referenceName(declared);
          if (name === undefined || !KEPT_RETURN_TYPES.has(name)) {
            if (returns !== 'observable') {
              const type = context.sourceCode.getText(declared);
              context.report({
                node: declared,
                messageId: 'notPromise',
                data: { policy, method: label, type },
              });
            }
          } else if (
            name === 'Observable' &&
            returns === undefined &&
            isTypeOnlyImport(context, declared, 'Observable')
          ) {
            context.report({
              node: declared,
              messageId: 'typeOnlyObservable',
              data: { policy, method: label },
            });
          }
        }
        const abstract = owner.type === 'ClassDeclaration' && owner.abstract;
        const managed = owner.decorators?.some((d) => managedBy.has(decoratorName(d) ?? ''));
        if (!abstract && !managed && !reportedClasses.has(owner)) {
          reportedClasses.add(owner);
          context.report({
            node: decorator,
            messageId: 'unmanagedClass',
            data: { policy, method: label, class: className(owner) ?? 'this class' },
          });
        }
      },
    };
  },
});
