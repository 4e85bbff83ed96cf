/**
 * Every TypeScript and JavaScript block of the docs compiles on its own, as a reader who pastes it
 * into a file of an application would compile it: each block is written to its own module under
 * `dist-docs/blocks/` and type-checked with the compiler options of an ESM Nest application
 * (`nodenext`, decorators with metadata, strict), importing the package by its published name —
 * which resolves to this repository's build through the package's own `exports`, so `npm run build`
 * comes first. A block that uses a name it neither declares nor imports fails here even when the file
 * it was cut from compiles.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { CodeBlock, DocProblem } from './doc-snippets.js';

/** The directory the blocks are written to (not committed). */
export const BLOCKS_DIR = join('dist-docs', 'blocks');

const TS_LANGS = new Set(['ts', 'typescript', 'tsx']);
const JS_LANGS = new Set(['js', 'javascript', 'mjs']);

/** The compiler options of an ESM Nest application. */
export const APPLICATION_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: true,
  allowJs: true,
  checkJs: false,
  noEmit: true,
};

/** The file name a block is compiled as: `.ts`, or `.mjs` / `.cjs` for JavaScript by its module syntax. */
function blockFileName(file: string, block: CodeBlock): string | undefined {
  const base = `${file.replace(/[/.]/g, '_')}_line${block.line}`;
  if (TS_LANGS.has(block.lang)) return `${base}.${block.lang === 'tsx' ? 'tsx' : 'ts'}`;
  if (JS_LANGS.has(block.lang))
    return /\bmodule\.exports\b|\brequire\(/.test(block.content) ? `${base}.cjs` : `${base}.mjs`;
  return undefined;
}

/** Whether a TypeScript block is a module (top-level import or export) rather than a script. */
function isModule(content: string): boolean {
  return /^(import|export)\b/m.test(content);
}

/**
 * Compiles each code block of `documents` (`[file, blocks]`) on its own, written under `blocksDir`
 * (relative to `root`, emptied first); returns one problem per compiler error, at the document line
 * it comes from.
 */
export function compileBlocks(
  root: string,
  documents: readonly (readonly [string, readonly CodeBlock[]])[],
  blocksDir = BLOCKS_DIR,
): DocProblem[] {
  const dir = join(root, blocksDir);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const origins = new Map<string, { file: string; line: number }>();
  for (const [file, blocks] of documents) {
    for (const block of blocks) {
      const name = blockFileName(file, block);
      if (name === undefined) continue;
      const path = join(dir, name);
      // A block without imports would be a script sharing one global scope with the others.
      const text =
        name.endsWith('.ts') && !isModule(block.content)
          ? `${block.content}export {};\n`
          : block.content;
      writeFileSync(path, text);
      origins.set(path, { file, line: block.line });
    }
  }
  const program = ts.createProgram([...origins.keys()], APPLICATION_OPTIONS);
  const problems: DocProblem[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const origin =
      diagnostic.file === undefined ? undefined : origins.get(diagnostic.file.fileName);
    if (diagnostic.file === undefined || origin === undefined || diagnostic.start === undefined) {
      problems.push({
        file: diagnostic.file?.fileName ?? BLOCKS_DIR,
        line: 0,
        message: `does not compile: ${message}`,
      });
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    // The fence is at origin.line; the block's first line is the one after it.
    problems.push({
      file: origin.file,
      line: origin.line + 1 + line,
      message: `the block at line ${origin.line} does not compile on its own: ${message}`,
    });
  }
  return problems;
}
