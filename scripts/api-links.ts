/**
 * `npm run docs:api` (and so `npm test`) runs this after TypeDoc: every link of the generated API
 * reference that stays inside it leads somewhere — the file exists, and a `#fragment` is an `id` of
 * that file. TypeDoc itself refuses a `{@link}` it cannot resolve (`treatValidationWarningsAsErrors`);
 * this catches what its validation does not look at (links written as Markdown in a doc comment,
 * fragments of pages, assets). Links that leave the reference (`https:`, `mailto:`) are not fetched.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** One link of the reference that leads nowhere. */
export interface BrokenLink {
  /** The page it is on, relative to the reference's root. */
  readonly page: string;
  readonly href: string;
  readonly reason: string;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * TypeDoc's class-hierarchy page, whose fragments are not checked: the page lists a type's place in
 * it, but an interface extending a function type (`ResilientFetch extends FetchFunction`) has a
 * "Hierarchy" link on its own page and no entry there, so that link opens the page at its top.
 */
const HIERARCHY_PAGE = /[\\/]hierarchy\.html$/;

/** The `id` attributes of an HTML or SVG text. */
export function idsOf(text: string): Set<string> {
  return new Set([...text.matchAll(/\sid="([^"]+)"/g)].map((match) => decodeEntities(match[1]!)));
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every broken internal link of the HTML pages under `dir`. */
export function brokenLinks(dir: string): BrokenLink[] {
  const ids = new Map<string, Set<string>>();
  const idsIn = (path: string): Set<string> => {
    let found = ids.get(path);
    if (found === undefined) {
      found = idsOf(readFileSync(path, 'utf8'));
      ids.set(path, found);
    }
    return found;
  };
  const broken: BrokenLink[] = [];
  for (const page of filesUnder(dir).filter((path) => path.endsWith('.html'))) {
    const html = readFileSync(page, 'utf8');
    for (const match of html.matchAll(/\shref="([^"]*)"/g)) {
      const href = decodeEntities(match[1]!);
      if (href === '' || href === '#' || /^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
      const [path, fragment] = href.split('#') as [string, string | undefined];
      const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
      const report = (reason: string) => broken.push({ page: relative(dir, page), href, reason });
      if (!target.startsWith(resolve(dir))) report('leads out of the reference');
      else if (!existsSync(target) || statSync(target).isDirectory())
        report('names a file that does not exist');
      else if (
        fragment !== undefined &&
        fragment !== '' &&
        /\.(html|svg)$/.test(target) &&
        !HIERARCHY_PAGE.test(target) &&
        !idsIn(target).has(decodeURIComponent(fragment))
      ) {
        report(`names #${fragment}, which is no id of ${relative(dir, target)}`);
      }
    }
  }
  return broken;
}

if (
  process.argv[1] !== undefined &&
  resolve(process.argv[1]).endsWith(join('scripts', 'api-links.js'))
) {
  const dir = resolve(import.meta.dirname, '..', '..', process.argv[2] ?? join('dist-docs', 'api'));
  if (!existsSync(join(dir, 'index.html'))) {
    console.error(
      `api links: ${relative(process.cwd(), dir)}/index.html does not exist (run typedoc first: npm run docs:api)`,
    );
    process.exitCode = 1;
  } else {
    const broken = brokenLinks(dir);
    for (const link of broken) console.error(`${link.page}: the link ${link.href} ${link.reason}`);
    const pages = filesUnder(dir).filter((path) => path.endsWith('.html')).length;
    if (broken.length > 0) process.exitCode = 1;
    else
      console.log(
        `api links: every internal link of the ${pages} pages in ${relative(process.cwd(), dir)} resolves`,
      );
  }
}
