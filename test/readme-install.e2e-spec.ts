import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Test } from '@nestjs/testing';

const readme = readFileSync('README.md', 'utf8');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  exports: Record<string, string | { types: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
  types: string;
  repository: { url: string };
};

/** The README section under `## <title>` (up to the next `## `). */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}`);
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

describe('README for users', () => {
  it('every link resolves from the npm page: absolute, into the repository, or an anchor of a README heading', () => {
    const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    const anchors = new Set(
      [...readme.matchAll(/^#+ (.+)$/gm)].map(
        (m) =>
          '#' +
          m[1]!
            .toLowerCase()
            .replace(/[^\w\- ]/g, '')
            .replace(/ /g, '-'),
      ),
    );
    const broken = links.filter((link) =>
      link.startsWith('#') ? !anchors.has(link) : !link.startsWith(`${repository}/`),
    );
    expect(broken).toEqual([]);
    expect(links.length).toBeGreaterThan(5);
  });

  it('the forRootAsync example of docs/configuration.md boots with the policy it configures (the docs check keeps the two equal)', async () => {
    const { AppModule } = await import('./fixtures/readme-config-service.js');
    const { PolicyRegistry } = await import('../lib/nest/index.js');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    const payments = moduleRef.get(PolicyRegistry).get('payments');
    expect([payments.options.attempts, payments.options.deadline]).toEqual([3, 10_000]);
    await moduleRef.close();
  });

  it('names the peers of every entry in package.json exports', () => {
    const table = section('Install');
    const entries = Object.keys(pkg.exports)
      .filter((subpath) => !subpath.endsWith('.json'))
      .map((subpath) =>
        subpath === '.' ? '@nresilience/nestjs' : `@nresilience/nestjs/${subpath.slice(2)}`,
      );
    expect(entries.filter((entry) => !table.includes(`| \`${entry}\` |`))).toEqual([]);
  });
});

describe('types for every entry under moduleResolution node10 (module: commonjs)', () => {
  it('typesVersions maps each exports subpath to its types, and "types" is the root entry\'s', () => {
    const expected = Object.fromEntries(
      Object.entries(pkg.exports)
        .filter(([subpath, target]) => subpath !== '.' && typeof target !== 'string')
        .map(([subpath, target]) => [subpath.slice(2), [(target as { types: string }).types]]),
    );
    expect(pkg.typesVersions).toEqual({ '*': expected });
    expect(pkg.types).toBe((pkg.exports['.'] as { types: string }).types);
  });
});
