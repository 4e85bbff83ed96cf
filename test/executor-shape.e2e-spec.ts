import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The executor's folder kept readable (DESIGN §3.2): every function takes at most four positional
 * parameters (more go in a named object), and no two of its functions share a name, so a rule is
 * found by its name in one place.
 */
const FOLDER = fileURLToPath(new URL('../lib/core/execution', import.meta.url));
const SOURCES = readdirSync(FOLDER)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
  .sort();

interface FunctionSite {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly parameters: number;
  /** A function of the module (declared, or a named function value), as against a method. */
  readonly moduleLevel: boolean;
}

function functionsOf(file: string): FunctionSite[] {
  const text = readFileSync(join(FOLDER, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const sites: FunctionSite[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isFunctionLike(node) &&
      !ts.isFunctionTypeNode(node) &&
      !ts.isConstructorTypeNode(node) &&
      !ts.isCallSignatureDeclaration(node)
    ) {
      const named =
        node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : undefined;
      const holder =
        node.parent !== undefined &&
        ts.isVariableDeclaration(node.parent) &&
        ts.isIdentifier(node.parent.name)
          ? node.parent.name.text
          : undefined;
      const name = ts.isConstructorDeclaration(node)
        ? 'constructor'
        : (named ?? holder ?? '(anonymous)');
      const moduleLevel =
        ts.isFunctionDeclaration(node) ||
        (holder !== undefined && ts.isSourceFile(node.parent.parent.parent));
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      sites.push({ file, name, line: line + 1, parameters: node.parameters.length, moduleLevel });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

const sites = SOURCES.flatMap(functionsOf);

/** Getters of the file's classes whose whole body is `return this.plan.<field>;` (derivable state). */
function planForwardersOf(file: string): string[] {
  const text = readFileSync(join(FOLDER, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isGetAccessorDeclaration(node) && node.body?.statements.length === 1) {
      const only = node.body.statements[0]!;
      if (
        ts.isReturnStatement(only) &&
        only.expression !== undefined &&
        /^this\.plan\.[A-Za-z]+$/.test(only.expression.getText(source))
      )
        found.push(`${file} get ${node.name.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('lib/core/execution', () => {
  it('reads its sources (the check is not vacuous)', () => {
    expect(SOURCES).toEqual(
      expect.arrayContaining(['call.ts', 'executor.ts', 'loop.ts', 'phases.ts']),
    );
    expect(sites.filter((s) => s.moduleLevel).map((s) => s.name)).toEqual(
      expect.arrayContaining(['execute', 'loop', 'admit', 'record', 'decideRetry']),
    );
  });

  it('has no function with more than four positional parameters', () => {
    const long = sites
      .filter((s) => s.parameters > 4)
      .map((s) => `${s.file}:${s.line} ${s.name} (${s.parameters})`);
    expect(long).toEqual([]);
  });

  it('keeps no getter that only forwards a field of the call plan (read call.plan.* directly)', () => {
    expect(SOURCES.flatMap(planForwardersOf)).toEqual([]);
  });

  it('has no two functions of its modules with the same name', () => {
    const byName = new Map<string, string[]>();
    for (const site of sites.filter((s) => s.moduleLevel))
      byName.set(site.name, [...(byName.get(site.name) ?? []), `${site.file}:${site.line}`]);
    const shared = [...byName]
      .filter(([, where]) => where.length > 1)
      .map(([name, where]) => `${name}: ${where.join(', ')}`);
    expect(shared).toEqual([]);
  });

  it('asks the guards of this process (limiter, quota, breaker) in one admission, phases.ts guard', () => {
    // A guard's decision: a limiter slot or token taken, a quota or the breaker asked to admit. The
    // refusal path's hint (loop.ts reads the quota's wait after the pause) decides nothing.
    const asks = /\b(?:limiter!?\.tryAcquire|quota!?\.refusal|breaker!?\.admit)\(/;
    const askers = SOURCES.flatMap((file) =>
      readFileSync(join(FOLDER, file), 'utf8')
        .split('\n')
        .map((line, index) => ({ file, line: index + 1, text: line }))
        .filter(({ text }) => asks.test(text) && !text.trimStart().startsWith('//')),
    ).map(({ file, line, text }) => `${file}:${line} ${text.trim()}`);
    expect(askers.filter((site) => !site.startsWith('phases.ts:'))).toEqual([
      expect.stringMatching(/^loop\.ts:\d+ const retryAfter = call\.quota!\.refusal\(/),
    ]);
    expect(askers.filter((site) => site.startsWith('phases.ts:'))).toHaveLength(3);
  });
});
