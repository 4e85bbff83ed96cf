import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();

/** Runs an ES module script in a fresh Node process from the repo root (the built dist, by package name). */
function run(script: string, nodeArgs: string[] = []): string {
  return execFileSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

describe('telemetry package boundaries (source)', () => {
  it('lib/core imports nothing from @opentelemetry/*', () => {
    const offenders = sources(join(root, 'lib/core')).filter((file) =>
      /from ['"]@opentelemetry\//.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('lib/nest never imports OpenTelemetry statically: only a dynamic import() of the telemetry listener', () => {
    const offenders = sources(join(root, 'lib/nest')).filter((file) => {
      const text = readFileSync(file, 'utf8');
      return (
        /from ['"]@opentelemetry\//.test(text) ||
        /from ['"]\.\.\/telemetry\/(index|otel-[a-z-]+|telemetry-names)\.js['"]/.test(text)
      );
    });
    expect(offenders).toEqual([]);
  });

  it('the logging listener (part of the root entry) imports only the core', () => {
    const text = readFileSync(join(root, 'lib/telemetry/logging-listener.ts'), 'utf8');
    const imports = [...text.matchAll(/from ['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(imports.every((path) => path!.startsWith('../core/'))).toBe(true);
  });
});

describe('built package, by name', () => {
  let dir: string;
  let hideOpenTelemetry: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nresilience-otel-'));
    hideOpenTelemetry = join(dir, 'hide-opentelemetry.mjs');
    // A resolve hook that makes every @opentelemetry/* package look uninstalled.
    const hook = `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/')) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
    writeFileSync(join(dir, 'hook.mjs'), hook);
    writeFileSync(
      hideOpenTelemetry,
      `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${join(dir, 'hook.mjs')}`)});\n`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('@nresilience/nestjs/telemetry resolves to withTelemetry, ResilienceTelemetry and the metric names, and patches nothing (sideEffects: false)', () => {
    const out = run(
      "const m = await import('@nresilience/nestjs/telemetry'); const core = await import('@nresilience/nestjs/core'); " +
        'console.log(JSON.stringify([typeof m.withTelemetry, typeof m.ResilienceTelemetry, m.MetricNames.calls, typeof core.Resilience.default.withTelemetry]));',
    );
    expect(JSON.parse(out)).toEqual(['function', 'function', 'nresilience.calls', 'undefined']);
  });

  it('without @opentelemetry/api the root entry loads, ResilienceModule starts with logging only, and the telemetry subpath says what is missing', () => {
    const script = `
import 'reflect-metadata';
const { Module } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const m = await import('@nresilience/nestjs');
class App {}
Module({ imports: [m.ResilienceModule.forRoot({ policies: { payments: {} } })] })(App);
const app = await NestFactory.createApplicationContext(App, { logger: false });
const value = await app.get(m.PolicyRegistry).get('payments').run(() => 42);
const telemetry = app.get(m.RESILIENCE_INSTRUMENTATION).telemetryEnabled;
const logging = app.get(m.RESILIENCE_INSTRUMENTATION).logging !== undefined;
await app.close();
let subpath;
try { await import('@nresilience/nestjs/telemetry'); subpath = 'loaded'; } catch (error) { subpath = error.code; }
console.log(JSON.stringify({ value, telemetry, logging, subpath }));`;
    const out = run(script, ['--import', hideOpenTelemetry]);
    expect(JSON.parse(out.split('\n').at(-1)!)).toEqual({
      value: 42,
      telemetry: false,
      logging: true,
      subpath: 'ERR_MODULE_NOT_FOUND',
    });
  });
});
