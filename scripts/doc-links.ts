/**
 * Links of README.md and docs/*.md that lead somewhere: a relative link names a file of the tree, an
 * absolute link into this repository (`<repository>/blob/main/<path>`, `/tree/main/<path>`) names one
 * too, and a `#fragment` is a heading of the Markdown file it points into. README.md ships on npm,
 * where relative links break, so it may only link absolutely or to its own headings.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { DocProblem } from './doc-snippets.js';

/** The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings (outside code fences). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add(headingAnchor(heading[1]!));
  }
  return anchors;
}

/** The targets of a Markdown text's inline links `[text](target)`, with their line, outside code fences and spans. */
export function linksOf(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (text.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g))
      links.push({ line: index + 1, target: match[1]! });
  });
  return links;
}

/** The repository's web address from package.json (`https://github.com/owner/name`). */
export function repositoryUrl(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    repository: { url: string };
  };
  return pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** Problems of the links of `file` (a path relative to `root`). */
export function checkLinks(root: string, file: string, markdown: string): DocProblem[] {
  const problems: DocProblem[] = [];
  const repository = repositoryUrl(root);
  const shipped = file === 'README.md';
  for (const { line, target } of linksOf(markdown)) {
    const problem = (message: string) =>
      problems.push({ file, line, message: `the link to ${target} ${message}` });
    if (/^(mailto:|https?:)/.test(target) && !target.startsWith(`${repository}/`)) continue;
    let path: string;
    let fragment: string | undefined;
    if (target.startsWith(`${repository}/`)) {
      const inTree = /^\/(?:blob|tree)\/main\/([^#]*)(?:#(.*))?$/.exec(
        target.slice(repository.length),
      );
      if (inTree === null) {
        problem('is into the repository but not a /blob/main/ or /tree/main/ path');
        continue;
      }
      [path, fragment] = [inTree[1]!, inTree[2]];
    } else if (shipped && !target.startsWith('#')) {
      problem('is relative, which breaks on the npm page: link to the repository instead');
      continue;
    } else {
      const [relative, hash] = target.split('#') as [string, string | undefined];
      path = relative === '' ? file : normalize(join(dirname(file), relative));
      fragment = hash;
    }
    const absolute = join(root, path);
    if (!existsSync(absolute)) {
      problem(`names ${path}, which does not exist`);
      continue;
    }
    if (fragment === undefined || fragment === '') continue;
    if (!path.endsWith('.md') || statSync(absolute).isDirectory()) {
      problem('has a fragment into a file that is not Markdown');
      continue;
    }
    const text = path === file ? markdown : readFileSync(absolute, 'utf8');
    if (!anchorsOf(text).has(fragment))
      problem(`names #${fragment}, which is no heading of ${path}`);
  }
  return problems;
}
