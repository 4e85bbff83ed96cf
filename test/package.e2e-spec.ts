import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();

/** Every built JavaScript file below `dir`. */
function listJs(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js'))
    .map((name) => join(dir, name));
}

/** Imports `specifier` in a fresh Node process from the repo root, as a user of the package would. */
function importByName(specifier: string, expression: string): string {
  const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(${expression}));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
}

describe('package boundaries', () => {
  it('lib/core imports nothing from @nestjs/*', () => {
    const offenders = sources(join(root, 'lib/core')).filter((file) =>
      /from ['"]@nestjs\//.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('lib/config (parser, policy building, pinned state) imports nothing from @nestjs/*', () => {
    const offenders = sources(join(root, 'lib/config')).filter((file) =>
      /from ['"]@nestjs\//.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('lib/ has no import cycles, type-only imports included', () => {
    const files = sources(join(root, 'lib'));
    const graph = new Map(
      files.map((file) => {
        const targets = [
          ...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)\.js'/g),
        ].map((m) => resolve(dirname(file), `${m[1]}.ts`));
        return [file, targets.filter((target) => files.includes(target))];
      }),
    );
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push(
          path
            .slice(path.indexOf(file))
            .concat(file)
            .map((f) => f.slice(root.length + 1))
            .join(' -> '),
        );
        return;
      }
      state.set(file, 'visiting');
      for (const target of graph.get(file)!) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('nothing in lib/ reads wall time or sets raw timers outside the system clock', () => {
    const pattern = /Date\.now\(|AbortSignal\.timeout\(|[^.\w]setTimeout\(|[^.\w]setInterval\(/;
    const offenders = sources(join(root, 'lib'))
      .filter((file) => !file.endsWith(join('core', 'time', 'clock.ts')))
      .filter((file) => pattern.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });
});

describe('exports map (built dist, imported by the package name)', () => {
  it('@nresilience/nestjs/core resolves to the engine', () => {
    const names = JSON.parse(
      importByName(
        '@nresilience/nestjs/core',
        "['Resilience','RetryBudget','Backoff','Classifier','FakeClock','SystemClock','CallRejectedError','parseRetryAfter'].filter((k) => m[k] === undefined)",
      ),
    );
    expect(names).toEqual([]);
    expect(importByName('@nresilience/nestjs/core', 'm.Resilience.default.options.attempts')).toBe(
      '3',
    );
  });

  it('@nresilience/nestjs resolves to the Nest layer and re-exports core', () => {
    const missing = JSON.parse(
      importByName(
        '@nresilience/nestjs',
        "['ResilienceModule','Resilient','InjectPolicy','AttemptSignal','ResilienceExceptionFilter','PolicyRegistry','Resilience','RetryBudget'].filter((k) => m[k] === undefined)",
      ),
    );
    expect(missing).toEqual([]);
  });

  it('@nresilience/nestjs/http exports the outbound HTTP API, and nothing built loads axios statically', () => {
    const missing = JSON.parse(
      importByName(
        '@nresilience/nestjs/http',
        "['createResilientFetch','ResilientHttpModule','markRepeatable','Quota','InjectResilientFetch','installResilientAdapter'].filter((k) => m[k] === undefined)",
      ),
    );
    expect(missing).toEqual([]);
    // axios and @nestjs/axios are optional peers: only a dynamic import() may load them (types may name them).
    const staticAxios = /(?:from\s*|^import\s*)['"](?:axios|@nestjs\/axios)['"]/m;
    const offenders = listJs(join(root, 'dist')).filter((file) =>
      staticAxios.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('loads @nestjs/microservices only by a dynamic import() (an optional peer: an RPC handler means the app has it)', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(pkg.peerDependenciesMeta['@nestjs/microservices']).toEqual({ optional: true });
    const staticImport = /(?:from\s*|^import\s*)['"]@nestjs\/microservices['"]/m;
    expect(
      listJs(join(root, 'dist')).filter((file) => staticImport.test(readFileSync(file, 'utf8'))),
    ).toEqual([]);
  });

  it('declares types before the default condition for every subpath', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect([subpath, Object.keys(target as object)[0]]).toEqual([subpath, 'types']);
    }
  });
});
