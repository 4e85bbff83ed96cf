import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokenLinks } from '../scripts/api-links.js';
import { compileBlocks } from '../scripts/doc-compile.js';
import { anchorsOf, checkLinks } from '../scripts/doc-links.js';
import { checkDocument, codeBlocks, snippetText } from '../scripts/doc-snippets.js';
import { documents, syncDocs } from '../scripts/docs-sync.js';

const root = process.cwd();

/** A scratch project: the real package.json (for entries and scripts) plus the given files. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'nresilience-docs-'));
  writeFileSync(join(dir, 'package.json'), readFileSync(join(root, 'package.json')));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const EXAMPLE = [
  '// header comment, not shown',
  '// #region demo',
  "import { Resilience } from '../../lib/core/index.js';",
  "import { FakeClock } from '../../lib/testing/index.js';",
  "import { helper } from './helper.js';",
  '// #endregion demo',
  'export function run() {',
  '  // #region demo',
  '  const policy = Resilience.default.with({ attempts: 2 });',
  '    // nested indentation is kept relative',
  '  // #endregion',
  '  return policy;',
  '}',
  '',
].join('\n');

describe('snippet extraction', () => {
  it('joins every part of a region, dedents each, and writes imports as an application does', () => {
    const dir = project({ 'docs/examples/demo.ts': EXAMPLE });
    expect(snippetText(dir, 'docs/examples/demo.ts#demo')).toBe(
      [
        "import { Resilience } from '@nresilience/nestjs/core';",
        "import { FakeClock } from '@nresilience/nestjs/testing';",
        "import { helper } from './helper.js';",
        'const policy = Resilience.default.with({ attempts: 2 });',
        '  // nested indentation is kept relative',
        '',
      ].join('\n'),
    );
  });

  it('a whole-file snippet drops the leading comment lines and the region markers', () => {
    const dir = project({ 'docs/examples/demo.ts': EXAMPLE });
    expect(snippetText(dir, 'docs/examples/demo.ts').split('\n').slice(0, 2)).toEqual([
      "import { Resilience } from '@nresilience/nestjs/core';",
      "import { FakeClock } from '@nresilience/nestjs/testing';",
    ]);
  });

  it('a missing file or region is an error naming it', () => {
    const dir = project({ 'docs/examples/demo.ts': EXAMPLE });
    expect(() => snippetText(dir, 'docs/examples/none.ts')).toThrow(
      'snippet file docs/examples/none.ts does not exist',
    );
    expect(() => snippetText(dir, 'docs/examples/demo.ts#other')).toThrow(
      'docs/examples/demo.ts has no "// #region other"',
    );
  });

  it('finds fenced blocks with their line, language and marker', () => {
    const blocks = codeBlocks(
      'text\n\n<!-- snippet: a.ts#x -->\n```ts\nconst a = 1;\n```\n\n```bash\nnpm test\n```\n',
    );
    expect(blocks.map((b) => [b.line, b.lang, b.snippet, b.content])).toEqual([
      [4, 'ts', 'a.ts#x', 'const a = 1;\n'],
      [8, 'bash', undefined, 'npm test\n'],
    ]);
  });
});

describe('document check', () => {
  const dir = project({ 'docs/examples/demo.ts': EXAMPLE, 'lib/core/index.ts': '' });
  const check = (markdown: string) => checkDocument(dir, 'doc.md', markdown);

  it('a marked block that drifted is reported, and sync rewrites it', () => {
    const stale = '# Doc\n\n<!-- snippet: docs/examples/demo.ts#demo -->\n```ts\nold text\n```\n';
    const { problems, synced } = check(stale);
    expect(problems).toEqual([
      {
        file: 'doc.md',
        line: 4,
        message: 'differs from docs/examples/demo.ts#demo (run npm run docs:sync)',
      },
    ]);
    expect(check(synced).problems).toEqual([]);
    expect(synced).toContain("```ts\nimport { Resilience } from '@nresilience/nestjs/core';\n");
  });

  it('an unmarked TypeScript block is reported', () => {
    expect(check('```ts\nconst a = 1;\n```\n').problems.map((p) => p.message)).toEqual([
      'the ```ts block is not extracted from a compiled, tested file: put <!-- snippet: path#region --> on the line before it',
    ]);
  });

  it('shell blocks are checked against package.json scripts and the CLI options', () => {
    const { problems } = check(
      '```bash\nnpm ci && npm run demo\nnpm run nope\nnpx nresilience simulate --config c.json --policy p --sede 1\nnpx nresilience price\n```\n',
    );
    expect(problems.map((p) => p.message)).toEqual([
      'the ```bash block runs "npm run nope", which package.json does not define',
      'the ```bash block passes --sede, which "nresilience simulate" does not take',
      'the ```bash block runs "nresilience price", which the CLI does not have',
    ]);
  });

  it('config blocks are validated as config', () => {
    expect(
      check('```yaml\npolicies:\n  prices: { attempts: 3, deadline: 2s }\n```\n').problems,
    ).toEqual([]);
    expect(
      check('```yaml\npolicies:\n  prices: { attempts: 0 }\n```\n').problems.map((p) => p.message),
    ).toEqual([expect.stringContaining('policies.prices.attempts: 0 is invalid')]);
  });

  it('layout blocks name paths that exist', () => {
    expect(
      check(
        '```\nlib/core      the engine\nlib/gone      removed   docs/examples/demo.ts  x\n  indented/ continuation\n```\n',
      ).problems.map((p) => p.message),
    ).toEqual(['the ``` block names lib/gone, which does not exist']);
  });
});

describe('link check', () => {
  const dir = project({
    'docs/guide.md': '# Guide\n\n## The `http` preset (core)\n\n```md\n# not a heading\n```\n',
    'docs/examples/demo.ts': EXAMPLE,
  });
  const repo = 'https://github.com/nresilience/nestjs';

  it('anchors are GitHub heading anchors, outside code fences', () => {
    expect([...anchorsOf(readFileSync(join(dir, 'docs/guide.md'), 'utf8'))]).toEqual([
      'guide',
      'the-http-preset-core',
    ]);
  });

  it('a guide may link relatively; files and headings must exist', () => {
    const markdown =
      '[a](guide.md#the-http-preset-core) [b](examples/demo.ts) [c](gone.md) [d](guide.md#nope) [e](https://example.com/x) `[f](code.md)`';
    expect(checkLinks(dir, 'docs/other.md', markdown).map((p) => p.message)).toEqual([
      'the link to gone.md names docs/gone.md, which does not exist',
      'the link to guide.md#nope names #nope, which is no heading of docs/guide.md',
    ]);
  });

  it('the README links absolutely into the repository (it ships on npm), to files and headings that exist', () => {
    const markdown = [
      `[a](${repo}/blob/main/docs/guide.md#the-http-preset-core)`,
      `[b](${repo}/tree/main/docs/examples)`,
      '[c](docs/guide.md)',
      `[d](${repo}/blob/main/docs/none.md)`,
      `[e](${repo}/issues)`,
    ].join('\n');
    expect(checkLinks(dir, 'README.md', markdown).map((p) => [p.line, p.message])).toEqual([
      [
        3,
        'the link to docs/guide.md is relative, which breaks on the npm page: link to the repository instead',
      ],
      [4, `the link to ${repo}/blob/main/docs/none.md names docs/none.md, which does not exist`],
      [
        5,
        `the link to ${repo}/issues is into the repository but not a /blob/main/ or /tree/main/ path`,
      ],
    ]);
  });
});

describe('blocks compile on their own', () => {
  it('a block that uses a name it neither declares nor imports fails at its document line; imports by package name resolve', () => {
    const markdown = [
      '# Doc',
      '',
      '```ts',
      "import { Resilience } from '@nresilience/nestjs/core';",
      'const policy = Resilience.default.with({ attempts: 2 });',
      'await policy.run(async () => url);',
      '```',
      '',
      '```ts',
      'const n: number = 1;',
      '```',
      '',
      '```js',
      "module.exports = { testEnvironment: 'node' };",
      '```',
      '',
    ].join('\n');
    const blocksDir = join('dist-docs', `check-${process.pid}`);
    const problems = compileBlocks(root, [['doc.md', codeBlocks(markdown)]], blocksDir);
    rmSync(join(root, blocksDir), { recursive: true, force: true });
    expect(problems).toEqual([
      {
        file: 'doc.md',
        line: 6,
        message:
          "the block at line 3 does not compile on its own: Cannot find name 'url'. Did you mean 'URL'?",
      },
    ]);
  });
});

describe('API reference links', () => {
  it('every internal link of the generated pages names a file that exists and an id it has; external links are not fetched', () => {
    const dir = project({
      'index.html':
        '<a href="classes/A.html#run">run</a> <a href="classes/A.html#gone">gone</a> <a href="classes/B.html">B</a> <a href="https://typedoc.org">x</a> <a href="">self</a>',
      'classes/A.html':
        '<h3 id="run">run</h3><a href="../index.html">up</a><a href="#run">here</a><a href="../../outside.html">out</a>',
      'hierarchy.html': '<div id="tsd-hierarchy"></div>',
      'classes/C.html': '<a href="../hierarchy.html#C">Hierarchy</a>',
    });
    expect(
      brokenLinks(dir)
        .map((link) => `${link.page} ${link.href}: ${link.reason}`)
        .sort(),
    ).toEqual([
      'classes/A.html ../../outside.html: leads out of the reference',
      'index.html classes/A.html#gone: names #gone, which is no id of classes/A.html',
      'index.html classes/B.html: names a file that does not exist',
    ]);
  });
});

describe('the docs of this repository', () => {
  it('every code block of README.md and docs/*.md is its source region or checks against the project, and every link resolves', () => {
    expect(documents(root)).toContain('docs/getting-started.md');
    expect(syncDocs(root, false)).toEqual([]);
  });
});
