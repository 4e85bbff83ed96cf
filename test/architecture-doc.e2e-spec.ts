import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * docs/ARCHITECTURE.md's walk of one `@Resilient` call stays true: every file it names exists under
 * lib/, every symbol a step names is in a file that step names (the rest of the section's symbols
 * somewhere in lib/), and each file leads one step only (the walk visits it once).
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const doc = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
const start = doc.indexOf('## One `@Resilient` call, down and back');
const end = doc.indexOf('\n## ', start + 1);
// What the walk was before this layout is history, not a claim about the tree.
const history = doc.indexOf('\nBefore this layout', start);
const section = doc.slice(start, history !== -1 ? history : end === -1 ? undefined : end);

const PATH = /^[\w./-]+\.ts$/;
const SYMBOL = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;
const ticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
// The section's own prose in backticks that names no code (the heading's decorator, a call's form).
const NOT_CODE = new Set(['@Resilient', 'app.init()', 'get(name)', '.then']);

/** The numbered steps: their text, joined across wrapped lines. */
const steps = section
  .split('\n')
  .reduce<string[]>((acc, line) => {
    if (/^\d+\. /.test(line)) acc.push(line);
    else if (acc.length > 0 && /^ {3,}\S/.test(line)) acc[acc.length - 1] += ' ' + line.trim();
    else if (acc.length > 0 && line.trim() === '') acc.push('');
    return acc;
  }, [])
  .filter((step) => step !== '');

const libPath = (file: string) => join(root, 'lib', file);
function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}
const allSource = sourcesUnder(join(root, 'lib'))
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');
const mentions = (text: string, symbol: string) =>
  symbol.split('.').every((part) => new RegExp(`\\b${part}\\b`).test(text));

describe('docs/ARCHITECTURE.md: one @Resilient call', () => {
  it('has a walk to check (the test is not vacuous)', () => {
    expect(steps.length).toBeGreaterThanOrEqual(10);
    expect(section).toContain('core/execution/loop.ts');
  });

  it('names only files that exist under lib/', () => {
    const missing = ticked(section).filter(
      (t) => PATH.test(t) && !t.startsWith('test/') && !existsSync(libPath(t)),
    );
    expect(missing).toEqual([]);
  });

  it('names in each step only symbols that file holds', () => {
    const wrong: string[] = [];
    for (const step of steps) {
      const files = ticked(step).filter((t) => PATH.test(t));
      const text = files.map((file) => readFileSync(libPath(file), 'utf8')).join('\n');
      for (const symbol of ticked(step).filter(
        (t) => !PATH.test(t) && !NOT_CODE.has(t) && SYMBOL.test(t),
      )) {
        if (!mentions(files.length > 0 ? text : allSource, symbol))
          wrong.push(`${symbol} (${files.join(', ') || 'no file'})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('names elsewhere in the section only symbols lib/ holds', () => {
    const inSteps = new Set(steps.flatMap(ticked));
    const outside = ticked(section).filter(
      (t) => !inSteps.has(t) && !PATH.test(t) && !NOT_CODE.has(t) && SYMBOL.test(t),
    );
    expect(outside.filter((symbol) => !mentions(allSource, symbol))).toEqual([]);
  });

  it('leads each step with a file of its own: every file is visited once', () => {
    const leads = steps
      .map((step) => ticked(step)[0])
      .filter((t): t is string => t !== undefined && PATH.test(t));
    expect(leads.length).toBeGreaterThanOrEqual(10);
    expect(leads.filter((file, i) => leads.indexOf(file) !== i)).toEqual([]);
  });
});
