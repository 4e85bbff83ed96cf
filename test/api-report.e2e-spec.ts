import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();
const reports = readdirSync(join(root, 'api')).filter((name) => name.endsWith('.api.md'));

/** Names a report exports (`export class X`, `export type X`, `export { X }`, …). */
function exported(report: string): Set<string> {
  const names = new Set<string>();
  for (const match of report.matchAll(
    /^export (?:declare )?(?:abstract )?(?:class|interface|type|const|function|enum|namespace) (\w+)/gm,
  ))
    names.add(match[1]!);
  for (const match of report.matchAll(/^export \{ ([^}]+) \}/gm))
    for (const name of match[1]!.split(',')) names.add(name.trim().split(' as ').pop()!);
  return names;
}

describe('public API report (api/*.api.md)', () => {
  it('every entry of package.json "exports" has a report', () => {
    const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const entries = Object.keys(exports)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? 'nestjs' : key.slice(2).replaceAll('/', '-')));
    expect(reports.map((name) => name.replace('.public.api.md', '')).sort()).toEqual(
      entries.sort(),
    );
  });

  it('no public signature names a type that no entry exports (internal helpers are @internal or exported)', () => {
    const everywhere = new Set(
      reports.flatMap((name) => [...exported(readFileSync(join(root, 'api', name), 'utf8'))]),
    );
    const leaks = reports.flatMap((name) =>
      [
        ...readFileSync(join(root, 'api', name), 'utf8').matchAll(
          /^\s*\/\/ Warning: \(ae-forgotten-export\) The symbol "(\w+)"/gm,
        ),
      ]
        .map((match) => match[1]!)
        .filter((symbol) => !everywhere.has(symbol))
        .map((symbol) => `${name}: ${symbol}`),
    );
    // Nest's ConfigurableModuleBuilder idiom: the module class extends the builder's generated class,
    // and the options types are `typeof` its generated values; Nest exposes neither by name.
    expect(leaks).toEqual([
      'nestjs.public.api.md: ASYNC_OPTIONS_TYPE',
      'nestjs.public.api.md: OPTIONS_TYPE',
      'nestjs.public.api.md: ConfigurableResilienceModule',
    ]);
  });
});
