// Compiles src/*.ts to dist/*.js with SWC and this folder's .swcrc (as `nest build -b swc` does).
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { transformFile } from '@swc/core';

mkdirSync(new URL('./dist/', import.meta.url), { recursive: true });
for (const name of readdirSync(new URL('./src/', import.meta.url)).filter((file) =>
  file.endsWith('.ts'),
)) {
  const { code } = await transformFile(new URL(`./src/${name}`, import.meta.url).pathname, {
    swcrc: true,
  });
  writeFileSync(new URL(`./dist/${name.replace(/\.ts$/, '.js')}`, import.meta.url), code);
}
console.log('swc: src → dist');
