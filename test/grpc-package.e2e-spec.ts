import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();

function importByName(specifier: string, expression: string): string {
  const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(${expression}));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
}

describe('@nresilience/nestjs/grpc entry', () => {
  it('exports createResilienceInterceptor and Classifier.grpc by the package name', () => {
    expect(
      JSON.parse(
        importByName(
          '@nresilience/nestjs/grpc',
          '[typeof m.createResilienceInterceptor, m.Classifier.grpc === undefined, m.GrpcStatus.UNAVAILABLE, m.WIRE_DEADLINE_SLACK_MS]',
        ),
      ),
    ).toEqual(['function', false, 14, 50]);
  });

  it('keeps @grpc/grpc-js out of the root entry and the core: only lib/grpc imports it', () => {
    const offenders = [
      ...sources(join(root, 'lib/core')),
      ...sources(join(root, 'lib/nest')),
    ].filter((file) => /from ['"]@grpc\//.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the root entry loads with @grpc/grpc-js unresolvable (the grpc entry then fails, proving the hook works)', () => {
    expect(
      withoutGrpc(
        "const m = await import('@nresilience/nestjs'); console.log(typeof m.ResilienceModule, typeof m.Classifier.grpc);",
      ),
    ).toBe('function object');
    expect(() => withoutGrpc("await import('@nresilience/nestjs/grpc');")).toThrow(
      /not installed: @grpc\/grpc-js/,
    );
  });

  it("classifier: 'grpc' in config needs no @grpc/grpc-js: Classifier.grpc is core code reading the status fields", () => {
    const script =
      "const { PolicyRegistry } = await import('@nresilience/nestjs');" +
      "const registry = PolicyRegistry.create({ policies: { inventory: { attempts: 3, backoff: { type: 'none' }, classifier: 'grpc' } } });" +
      "const status = (code) => Object.assign(new Error('s'), { code, details: '' });" +
      "const runs = []; for (const code of [14, 5]) { let n = 0; await registry.handle('inventory').run(() => { n++; throw status(code); }).catch(() => {}); runs.push(n); }" +
      'console.log(JSON.stringify(runs));';
    expect(JSON.parse(withoutGrpc(script))).toEqual([3, 1]);
  });
});

/** Runs `script` in a fresh Node process where every `@grpc/*` import fails, as if the optional peers were absent. */
function withoutGrpc(script: string): string {
  const hook = `data:text/javascript,${encodeURIComponent("export async function resolve(s, c, next) { if (s.startsWith('@grpc/')) throw new Error('not installed: ' + s); return next(s, c); }")}`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hook)});`;
  return execFileSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      '--input-type=module',
      '-e',
      script,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  ).trim();
}
