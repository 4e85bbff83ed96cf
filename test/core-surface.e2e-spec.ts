import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();
const core = join(root, 'lib', 'core');

/**
 * The core's concepts from the ground up: a file may import its own concept's files and those of
 * the concepts below it, never one above. `rules` and the root `errors.ts` are one floor (a rule
 * throws `PolicyConfigError`, whose message describes the value with the rules' `describeValue`);
 * the two entries sit on top of everything.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['rules', 'errors.ts'],
  ['signals'],
  ['time'],
  ['ambient'],
  ['diagnostics'],
  ['classification'],
  ['backoff'],
  ['estimators'],
  ['budget'],
  ['breaker'],
  ['limits'],
  ['hedging'],
  ['events'],
  ['fallback'],
  ['streams'],
  ['execution'],
  ['policy'],
  ['index.ts', 'internal.ts'],
];

/** Every TypeScript file below `dir`, specs included. */
function allTs(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return allTs(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The files a source imports by a relative path (static, type-only, re-export or dynamic), resolved to `.ts`. */
function importsOf(file: string, text: string): string[] {
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)\.js['"]/g)].map((m) =>
    resolve(dirname(file), `${m[1]}.ts`),
  );
}

/** The core files `file` (outside the core) imports other than the public index and the internal entry. */
function deepCoreImports(file: string, text: string): string[] {
  const entries = [join(core, 'index.ts'), join(core, 'internal.ts')];
  return importsOf(file, text).filter(
    (target) => target.startsWith(core + sep) && !entries.includes(target),
  );
}

/** The floor of a core file: the index in FLOORS of its top folder (or root file). */
function floorOf(file: string): number {
  const top = relative(core, file).split(sep)[0]!;
  const floor = FLOORS.findIndex((names) => names.includes(top));
  if (floor < 0)
    throw new Error(`lib/core/${top} is on no floor of this test: add it where it belongs`);
  return floor;
}

describe("the core's surface", () => {
  it('catches a deep import, static or dynamic, and lets the two entries through', () => {
    const file = join(root, 'lib', 'http', 'example.ts');
    const text = [
      "import { checkValue } from '../core/rules/value-rule.js';",
      "import type { Policy } from '../core/index.js';",
      "import { given } from '../core/internal.js';",
      "const events = await import('../core/events/call-events.js');",
    ].join('\n');
    expect(deepCoreImports(file, text).map((target) => relative(root, target))).toEqual([
      join('lib', 'core', 'rules', 'value-rule.ts'),
      join('lib', 'core', 'events', 'call-events.ts'),
    ]);
  });

  it('every file outside lib/core (specs included) imports the core through index.ts or internal.ts only', () => {
    const offenders = allTs(join(root, 'lib'))
      .filter((file) => !file.startsWith(core + sep))
      .flatMap((file) =>
        deepCoreImports(file, readFileSync(file, 'utf8')).map(
          (target) => `${relative(root, file)} -> ${relative(root, target)}`,
        ),
      );
    expect(offenders).toEqual([]);
  });

  it('the internal entry is not in the package exports map', () => {
    const exports = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports as Record<
      string,
      unknown
    >;
    expect(Object.keys(exports).filter((key) => key.includes('internal'))).toEqual([]);
    expect(JSON.stringify(exports)).not.toContain('internal');
  });

  it('no import inside lib/core runs from a lower concept up to a higher one', () => {
    const upward = sources(core).flatMap((file) =>
      importsOf(file, readFileSync(file, 'utf8'))
        .filter((target) => target.startsWith(core + sep) && floorOf(target) > floorOf(file))
        .map((target) => `${relative(core, file)} -> ${relative(core, target)}`),
    );
    expect(upward).toEqual([]);
  });

  it('every folder and root file of lib/core stands on a floor', () => {
    const tops = readdirSync(core).filter(
      (name) =>
        statSync(join(core, name)).isDirectory() ||
        (name.endsWith('.ts') && !name.endsWith('.spec.ts')),
    );
    expect(tops.filter((top) => !FLOORS.some((names) => names.includes(top)))).toEqual([]);
  });
});
