import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sources } from './support/sources.js';

const root = process.cwd();

describe("Nest's internals", () => {
  it('only lib/nest/nest-internals.ts reads them (non-public constants and the injector)', () => {
    const internal =
      /from ['"]@nestjs\/(?:common\/constants|core\/injector)[^'"]*['"]|getStaticTransientInstances|isDependencyTreeStatic/;
    const readers = sources(join(root, 'lib'))
      .filter((file) => internal.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(readers).toEqual([join('lib', 'nest', 'nest-internals.ts')]);
  });
});
