// Writes src/app.module.ts from the repository README's quick start (its first ```ts block, word for
// word) and checks that this app depends on exactly the packages of the README's install line, so
// the app is what a reader who follows only the README builds.
import { readFileSync, writeFileSync } from 'node:fs';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const section = (title) => {
  const start = readme.indexOf(`\n## ${title}`);
  if (start < 0) throw new Error(`README has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
};

const quickStart = /```ts\n([\s\S]*?)```/.exec(section('Quick start'))?.[1];
if (quickStart === undefined) throw new Error('README "## Quick start" has no ```ts block');
writeFileSync(new URL('./src/app.module.ts', import.meta.url), quickStart);

const line = section('Install')
  .split('\n')
  .find((text) => text.startsWith('npm i @nresilience/nestjs'));
if (line === undefined)
  throw new Error('README "## Install" has no line starting with "npm i @nresilience/nestjs"');
const wanted = line
  .split(/\s+/)
  .slice(2)
  .filter((name) => name !== '@nresilience/nestjs')
  .sort();
const manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const have = Object.keys(manifest.dependencies).sort();
if (JSON.stringify(wanted) !== JSON.stringify(have)) {
  throw new Error(
    `the README's install line names ${wanted.join(' ')} but this app depends on ${have.join(' ')}`,
  );
}
console.log(
  `src/app.module.ts is the README quick start (${quickStart.split('\n').length} lines); dependencies = the install line: ${have.join(' ')}`,
);
