/**
 * `npm run docs:sync`: rewrites every marked code block of README.md and docs/*.md from its snippet.
 * `npm run docs:check` (and `npm test`): fails listing each block that drifted or cannot be verified,
 * each TypeScript or JavaScript block that does not compile on its own, and each link that leads nowhere.
 * docs/DESIGN.md is the design card (the product's intended shape, not its current code) and is not read.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkLinks } from './doc-links.js';
import { compileBlocks } from './doc-compile.js';
import { type CodeBlock, type DocProblem, checkDocument, codeBlocks } from './doc-snippets.js';

/** The documents the check covers. */
export function documents(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter(
    (name) => name.endsWith('.md') && name !== 'DESIGN.md',
  );
  return ['README.md', ...docs.sort().map((name) => `docs/${name}`)];
}

/** Checks (and with `write`, syncs) every document; returns what is still wrong. */
export function syncDocs(root: string, write: boolean): DocProblem[] {
  const problems: DocProblem[] = [];
  const blocks: [string, CodeBlock[]][] = [];
  for (const file of documents(root)) {
    const markdown = readFileSync(join(root, file), 'utf8');
    const result = checkDocument(root, file, markdown);
    if (write && result.synced !== markdown) writeFileSync(join(root, file), result.synced);
    problems.push(...(write ? checkDocument(root, file, result.synced).problems : result.problems));
    problems.push(...checkLinks(root, file, result.synced));
    blocks.push([file, codeBlocks(result.synced)]);
  }
  problems.push(...compileBlocks(root, blocks));
  return problems;
}

if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]).endsWith(join('scripts', 'docs-sync.js'))
) {
  const root = resolve(import.meta.dirname, '..', '..');
  const problems = syncDocs(root, !process.argv.includes('--check'));
  for (const p of problems) console.error(`${p.file}:${p.line}: ${p.message}`);
  if (problems.length > 0) process.exitCode = 1;
  else
    console.log(
      `docs: every code block of ${documents(root).join(', ')} matches the code and compiles on its own; every link resolves`,
    );
}
