import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();

describe('the module options', () => {
  it('are injected raw in one place, where ResilienceModule reads them once (RESILIENCE_SETTINGS)', () => {
    // The token is defined, exported and handed to Nest's module builder elsewhere; only an
    // `inject: [...]` list or an `@Inject(...)` reads the options themselves.
    const injects =
      /@Inject\(\s*RESILIENCE_MODULE_OPTIONS|inject:\s*\[[^\]]*RESILIENCE_MODULE_OPTIONS/;
    const readers = sources(join(root, 'lib'))
      .filter((file) => injects.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(readers).toEqual([join('lib', 'nest', 'resilience.module.ts')]);
  });
});
