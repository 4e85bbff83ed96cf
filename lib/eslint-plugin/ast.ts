import type { TSESLint, TSESTree } from '@typescript-eslint/utils';

/**
 * Syntax helpers shared by the rules. Type-only imports of `@typescript-eslint/utils`: the plugin has no
 * runtime dependency beyond ESLint itself (node types are compared as their string values).
 * @internal
 */
export type Node = TSESTree.Node;

/** A function whose body runs when it is called. @internal */
export type FunctionNode =
  TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression;

/** `true` when `node` is the identifier `name` (any identifier when `name` is omitted). @internal */
export function isIdentifier(
  node: Node | null | undefined,
  name?: string,
): node is TSESTree.Identifier {
  return node?.type === 'Identifier' && (name === undefined || node.name === name);
}

/** The static name of a member access (`a.b`, `a['b']`), else undefined. @internal */
export function propertyName(node: TSESTree.MemberExpression): string | undefined {
  if (!node.computed && node.property.type === 'Identifier') return node.property.name;
  if (node.property.type === 'Literal' && typeof node.property.value === 'string')
    return node.property.value;
  return undefined;
}

/** The method name of a call `x.name(...)`, else undefined. @internal */
export function calledMethod(node: TSESTree.CallExpression): string | undefined {
  return node.callee.type === 'MemberExpression' ? propertyName(node.callee) : undefined;
}

/** The name a decorator is applied by: `@Name` or `@Name(...)` (also `@ns.Name(...)`). @internal */
export function decoratorName(decorator: TSESTree.Decorator): string | undefined {
  const expression: Node =
    decorator.expression.type === 'CallExpression'
      ? decorator.expression.callee
      : decorator.expression;
  if (expression.type === 'Identifier') return expression.name;
  if (expression.type === 'MemberExpression') return propertyName(expression);
  return undefined;
}

/** The decorator of `node` applied by `name`, if any. @internal */
export function findDecorator(
  decorators: readonly TSESTree.Decorator[] | undefined,
  name: string,
): TSESTree.Decorator | undefined {
  return decorators?.find((decorator) => decoratorName(decorator) === name);
}

/** The nearest enclosing function of `node` (not `node` itself), or undefined at module or class level. @internal */
export function enclosingFunction(node: Node): FunctionNode | undefined {
  for (let current = node.parent; current != null; current = current.parent) {
    if (
      current.type === 'FunctionDeclaration' ||
      current.type === 'FunctionExpression' ||
      current.type === 'ArrowFunctionExpression'
    )
      return current;
  }
  return undefined;
}

/** `true` when `fn` is called where it is written: `(() => ...)()`, `(function () {...})()`. @internal */
export function isImmediatelyInvoked(fn: FunctionNode): boolean {
  return fn.parent?.type === 'CallExpression' && fn.parent.callee === fn;
}

/** The method a function is the body of (`class { m() {} }`, `{ m() {} }`), if any. @internal */
export function methodOf(
  fn: FunctionNode,
): TSESTree.MethodDefinition | TSESTree.Property | undefined {
  const parent = fn.parent;
  if (parent?.type === 'MethodDefinition' && parent.value === fn) return parent;
  if (parent?.type === 'Property' && parent.value === fn) return parent;
  return undefined;
}

/** The name of a property key (`a`, `'a'`), else undefined. @internal */
export function keyName(key: TSESTree.Node): string | undefined {
  if (key.type === 'Identifier') return key.name;
  if (key.type === 'Literal' && typeof key.value === 'string') return key.value;
  return undefined;
}

/** The non-spread property `name` of an object literal, if present. @internal */
export function findProperty(
  object: TSESTree.ObjectExpression,
  name: string,
): TSESTree.Property | undefined {
  return object.properties.find(
    (p): p is TSESTree.Property => p.type === 'Property' && !p.computed && keyName(p.key) === name,
  );
}

/** The name `fn` is called by: its method key, its own name, or the `const` it is assigned to. @internal */
export function functionName(fn: FunctionNode): string | undefined {
  const method = methodOf(fn);
  if (method !== undefined) return keyName(method.key);
  if (fn.type !== 'ArrowFunctionExpression' && fn.id) return fn.id.name;
  if (fn.parent?.type === 'VariableDeclarator' && fn.parent.id.type === 'Identifier')
    return fn.parent.id.name;
  return undefined;
}

/** A printable name for the function or method `fn` (`Class.method`, `name`, or `this function`). @internal */
export function functionLabel(fn: FunctionNode): string {
  const method = methodOf(fn);
  const name = functionName(fn);
  const owner = method?.parent?.type === 'ClassBody' ? className(method.parent.parent) : undefined;
  if (owner !== undefined) return `${owner}.${name ?? 'method'}`;
  return name ?? 'this function';
}

/** `Class.method` for a class method. @internal */
export function methodLabel(method: TSESTree.MethodDefinition): string {
  return `${className(method.parent.parent) ?? 'class'}.${keyName(method.key) ?? 'method'}`;
}

/** The name of a class declaration or named class expression. @internal */
export function className(node: Node | undefined): string | undefined {
  return (node?.type === 'ClassDeclaration' || node?.type === 'ClassExpression') && node.id
    ? node.id.name
    : undefined;
}

/**
 * The expression `identifier` was initialized with, when it names a `const` declared once with an
 * initializer (followed through further such identifiers, at most `depth` times).
 * @internal
 */
export function constInitializer(
  context: Readonly<TSESLint.RuleContext<string, readonly unknown[]>>,
  identifier: TSESTree.Identifier,
  depth = 3,
): TSESTree.Expression | undefined {
  let scope: TSESLint.Scope.Scope | null = context.sourceCode.getScope(identifier);
  while (scope !== null) {
    const variable = scope.set.get(identifier.name);
    if (variable !== undefined) {
      const definition = variable.defs.length === 1 ? variable.defs[0] : undefined;
      const declarator = definition?.node;
      if (
        declarator?.type !== 'VariableDeclarator' ||
        declarator.parent?.type !== 'VariableDeclaration' ||
        declarator.parent.kind !== 'const'
      )
        return undefined;
      const init = declarator.init ?? undefined;
      if (init?.type === 'Identifier' && depth > 0)
        return constInitializer(context, init, depth - 1) ?? init;
      return init;
    }
    scope = scope.upper;
  }
  return undefined;
}

/** Calls `visit` for every node below `root` (not descending into nested functions when `skipFunctions`). @internal */
export function walk(root: Node, visit: (node: Node) => void, skipFunctions = true): void {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    visit(node);
    for (const key of Object.keys(node)) {
      if (key === 'parent') continue;
      const value = (node as unknown as Record<string, unknown>)[key];
      const children = Array.isArray(value) ? value : [value];
      for (const child of children) {
        if (!isNode(child)) continue;
        if (
          skipFunctions &&
          (child.type === 'FunctionDeclaration' ||
            child.type === 'FunctionExpression' ||
            child.type === 'ArrowFunctionExpression')
        )
          continue;
        stack.push(child);
      }
    }
  }
}

function isNode(value: unknown): value is Node {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { type?: unknown }).type === 'string'
  );
}
