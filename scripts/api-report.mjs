// The public API report: one API Extractor report per package entry (package.json "exports"), checked
// in under api/. `node scripts/api-report.mjs` fails when a built entry's surface differs from its
// report; `--update` rewrites the reports (npm run api:update). Reads the built declarations: build first.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(import.meta.dirname, '..');
const update = process.argv.includes('--update');

/** `{ name, types }` for every entry of the exports map: `.` is `nestjs`, `./core` is `core`. */
export function entries() {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object' && target.types !== undefined)
    .map(([subpath, target]) => ({
      name: subpath === '.' ? 'nestjs' : subpath.slice(2).replaceAll('/', '-'),
      types: target.types,
    }));
}

// What the report records: the surface and the leaks (a public signature using a type no entry
// exports, an @internal symbol in a public signature). Release tags and member docs are not reviewed
// here (every export is public unless tagged @internal).
const messages = {
  compilerMessageReporting: { default: { logLevel: 'warning' } },
  extractorMessageReporting: {
    default: { logLevel: 'warning', addToApiReportFile: false },
    'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
    'ae-incompatible-release-tags': { logLevel: 'none', addToApiReportFile: true },
    'ae-internal-missing-underscore': { logLevel: 'none' },
    'ae-missing-release-tag': { logLevel: 'none' },
    'ae-undocumented': { logLevel: 'none' },
    'ae-unresolved-link': { logLevel: 'none' },
    // ESLint's own types reach into @eslint/plugin-kit's .cts declarations; they are not ours to analyze.
    'ae-wrong-input-file-type': { logLevel: 'none' },
  },
  tsdocMessageReporting: { default: { logLevel: 'none' } },
};

function report(entry, tempFolder) {
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(root, entry.types),
      compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
      apiReport: {
        enabled: true,
        reportFileName: entry.name,
        reportFolder: join(root, 'api'),
        reportTempFolder: tempFolder,
        reportVariants: ['public'],
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages,
    },
    configObjectFullPath: join(root, 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    showDiagnostics: false,
    messageCallback: quietVersionNote,
  });
  return { name: entry.name, changed: result.apiReportChanged, errors: result.errorCount };
}

/** The "will use the bundled TypeScript" line is printed on every run: keep it out of the output. */
function quietVersionNote(message) {
  if (
    message.messageId === 'console-compiler-version-notice' ||
    message.messageId === 'console-preamble'
  )
    message.handled = true;
}

if (process.argv[1] === import.meta.filename) {
  const tempFolder = mkdtempSync(join(tmpdir(), 'nresilience-api-'));
  mkdirSync(join(root, 'api'), { recursive: true });
  try {
    const results = entries().map((entry) => report(entry, tempFolder));
    const stale = results.filter((r) => r.changed || r.errors > 0);
    for (const r of results)
      console.log(
        `${r.name}: ${r.changed ? (update ? 'report updated' : 'SURFACE CHANGED') : 'unchanged'}${r.errors ? `, ${r.errors} errors` : ''}`,
      );
    if (stale.length > 0 && !update) {
      console.error(
        `The public API changed (${stale.map((r) => r.name).join(', ')}): review the difference, then run npm run api:update and commit api/.`,
      );
      process.exitCode = 1;
    } else if (results.some((r) => r.errors > 0)) process.exitCode = 1;
  } finally {
    rmSync(tempFolder, { recursive: true, force: true });
  }
}
