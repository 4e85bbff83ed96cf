/**
 * Docs whose code is the project's code: every fenced block of README.md and docs/*.md is either the
 * marked region of a compiled, tested file (`<!-- snippet: path#region -->` on the line before the
 * fence, or `<!-- snippet: path -->` for a whole file) or, for blocks that are not TypeScript,
 * checked against the project: shell commands against package.json scripts and the CLI's options,
 * YAML/JSON config against the config validator, layout trees against the file system.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { USAGE } from '../lib/cli/cli.js';
import { parseConfigText, parseResilienceConfig } from '../lib/config/index.js';

/** One fenced block: where it is, its info string, the snippet it is marked with, and its text. */
export interface CodeBlock {
  readonly line: number;
  readonly lang: string;
  readonly snippet: string | undefined;
  readonly content: string;
  /** Offsets of `content` in the document (for rewriting it). */
  readonly start: number;
  readonly end: number;
}

/** A block that does not match what it claims to be. */
export interface DocProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

const FENCE = /^```(\S*)\s*$/;
const MARKER = /^<!--\s*snippet:\s*(\S+)\s*-->$/;

/** The fenced blocks of `markdown` (top-level fences of three backticks). */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let offset = 0;
  let open: { line: number; lang: string; snippet: string | undefined; start: number } | undefined;
  let previous = '';
  lines.forEach((text, index) => {
    const fence = FENCE.exec(text);
    if (open === undefined && fence) {
      open = {
        line: index + 1,
        lang: fence[1] ?? '',
        snippet: MARKER.exec(previous.trim())?.[1],
        start: offset + text.length + 1,
      };
    } else if (open !== undefined && text === '```') {
      blocks.push({ ...open, content: markdown.slice(open.start, offset), end: offset });
      open = undefined;
    }
    if (text.trim() !== '') previous = text;
    offset += text.length + 1;
  });
  return blocks;
}

/** `lib/<entry>/index` → the package specifier it is published as, from package.json `exports`. */
export function entrySpecifiers(root: string): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
  };
  const map = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file =
      typeof target === 'object' && target !== null
        ? (target as { default?: string }).default
        : undefined;
    const match = file === undefined ? null : /^\.\/dist\/(.+)\.js$/.exec(file);
    if (match)
      map.set(`lib/${match[1]}`, subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`);
  }
  return map;
}

/** Replaces relative imports of a package entry's source (`'../../lib/core/index.js'`) with the entry's name. */
export function rewriteImports(
  code: string,
  sourceFile: string,
  root: string,
  entries: Map<string, string>,
): string {
  return code.replace(
    /(from\s+|import\s+|import\()(['"])(\.{1,2}\/[^'"]+)\2/g,
    (whole, keyword: string, quote: string, specifier: string) => {
      const target = relative(root, resolve(dirname(sourceFile), specifier))
        .split('\\')
        .join(posix.sep)
        .replace(/\.(js|ts)$/, '');
      const name = entries.get(target);
      return name === undefined ? whole : `${keyword}${quote}${name}${quote}`;
    },
  );
}

/**
 * The text a marker names: the lines between `// #region <name>` and the next `// #endregion` of the
 * file — every region of that name in order, each dedented on its own, so an example can show its
 * imports and the body of a tested function as one block — or the whole file without its leading
 * `//` comment lines. Imports of package entries are shown as an application writes them.
 * @throws Error when the file or the region does not exist
 */
export function snippetText(
  root: string,
  snippet: string,
  entries = entrySpecifiers(root),
): string {
  const [path, region] = snippet.split('#') as [string, string | undefined];
  const file = join(root, path);
  if (!existsSync(file)) throw new Error(`snippet file ${path} does not exist`);
  let lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
  if (region === undefined) {
    while (lines.length > 0 && /^\s*\/\//.test(lines[0]!)) lines.shift();
    lines = lines.filter((line) => !/^\s*\/\/\s*#(end)?region\b/.test(line));
  } else {
    const opening = new RegExp(`^\\s*//\\s*#region\\s+${region}\\s*$`);
    const parts: string[] = [];
    for (
      let begin = lines.findIndex((line) => opening.test(line));
      begin >= 0;
      begin = lines.findIndex((line, index) => index > begin && opening.test(line))
    ) {
      const end = lines.findIndex(
        (line, index) => index > begin && /^\s*\/\/\s*#endregion\b/.test(line),
      );
      if (end < 0) throw new Error(`${path}: region "${region}" has no "// #endregion"`);
      parts.push(
        ...dedent(
          lines.slice(begin + 1, end).filter((line) => !/^\s*\/\/\s*#(end)?region\b/.test(line)),
        ),
      );
    }
    if (parts.length === 0) throw new Error(`${path} has no "// #region ${region}"`);
    lines = parts;
  }
  return `${rewriteImports(lines.join('\n'), file, root, entries)}\n`;
}

function dedent(lines: string[]): string[] {
  const indent = Math.min(
    ...lines
      .filter((line) => line.trim() !== '')
      .map((line) => line.length - line.trimStart().length),
  );
  return Number.isFinite(indent) ? lines.map((line) => line.slice(indent)) : lines;
}

const CODE_LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs', 'tsx']);

/** Problems of an unmarked block, checked against what it refers to. */
function checkUnmarked(root: string, block: CodeBlock, scripts: Record<string, string>): string[] {
  if (CODE_LANGS.has(block.lang))
    return [
      'is not extracted from a compiled, tested file: put <!-- snippet: path#region --> on the line before it',
    ];
  if (block.lang === 'bash' || block.lang === 'sh' || block.lang === 'shell')
    return checkCommands(block.content, scripts);
  if (block.lang === 'yaml' || block.lang === 'yml' || block.lang === 'json')
    return checkConfig(block.content, block.lang);
  if (block.lang === '' || block.lang === 'text') return checkLayout(root, block.content);
  return [`has language "${block.lang}", which the docs check does not know how to verify`];
}

function checkCommands(content: string, scripts: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const match of content.matchAll(/npm run ([\w:.-]+)/g)) {
    if (scripts[match[1]!] === undefined)
      problems.push(`runs "npm run ${match[1]}", which package.json does not define`);
  }
  for (const match of content.matchAll(/npx nresilience (\S+)([^\n]*)/g)) {
    if (match[1] !== 'simulate')
      problems.push(`runs "nresilience ${match[1]}", which the CLI does not have`);
    for (const flag of match[2]!.matchAll(/--([\w-]+)/g)) {
      if (!new RegExp(`\\s--${flag[1]}\\b`).test(USAGE))
        problems.push(`passes --${flag[1]}, which "nresilience simulate" does not take`);
    }
  }
  return problems;
}

function checkConfig(content: string, lang: string): string[] {
  try {
    const parsed = parseResilienceConfig(
      parseConfigText(content, lang === 'json' ? 'block.json' : 'block.yaml'),
    );
    return parsed.policies.size === 0 ? ['defines no policies'] : [];
  } catch (error) {
    return [`is not a valid resilience config: ${(error as Error).message}`];
  }
}

/**
 * A layout tree (`path   what it holds`): every path that starts a line or a column (two spaces or
 * more before it) exists. Indented lines continue a description and are not read.
 */
function checkLayout(root: string, content: string): string[] {
  const problems: string[] = [];
  for (const line of content.split('\n')) {
    if (/^\s/.test(line)) continue;
    for (const match of line.matchAll(/(?:^|\s{2,})((?:[\w.-]+\/)+[\w.-]*)(?=\s|$)/g)) {
      if (!existsSync(join(root, match[1]!)))
        problems.push(`names ${match[1]}, which does not exist`);
    }
  }
  return problems;
}

/**
 * Checks one Markdown document; with `write`, also returns it with every marked block replaced by its
 * snippet's current text.
 */
export function checkDocument(
  root: string,
  file: string,
  markdown: string,
): { problems: DocProblem[]; synced: string } {
  const entries = entrySpecifiers(root);
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const problems: DocProblem[] = [];
  let synced = '';
  let cursor = 0;
  for (const block of codeBlocks(markdown)) {
    if (block.snippet === undefined) {
      for (const message of checkUnmarked(root, block, scripts))
        problems.push({
          file,
          line: block.line,
          message: `the \`\`\`${block.lang} block ${message}`,
        });
      continue;
    }
    let expected: string;
    try {
      expected = snippetText(root, block.snippet, entries);
    } catch (error) {
      problems.push({ file, line: block.line, message: (error as Error).message });
      continue;
    }
    if (expected !== block.content)
      problems.push({
        file,
        line: block.line,
        message: `differs from ${block.snippet} (run npm run docs:sync)`,
      });
    synced += markdown.slice(cursor, block.start) + expected;
    cursor = block.end;
  }
  return { problems, synced: synced + markdown.slice(cursor) };
}
