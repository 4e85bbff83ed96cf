// Packaging checks on the tarball `npm publish` would upload: its contents, publint, attw for every
// entry, and a temporary app that installs it from the tarball and loads every entry of the `exports`
// map with `import` and with `require()` — first with only the required peers (an entry whose optional
// peer is absent must fail naming that peer), then with every peer. The entry list is read from
// package.json `exports`, so new entries are checked without touching this file.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import {
  entrySpecifiers,
  installedVersion,
  output,
  packTarball,
  pkg,
  root,
  run,
  tempDir,
} from './support.mjs';

const problems = [];
const fail = (message) => {
  problems.push(message);
  console.log(`  ✗ ${message}`);
};
const pass = (message) => console.log(`  ✓ ${message}`);

function checkContents(files) {
  console.log('\ntarball contents');
  const allowed = (path) =>
    path === 'package.json' ||
    path === 'README.md' ||
    path === 'LICENSE' ||
    path.startsWith('dist/');
  const extra = files.filter((path) => !allowed(path));
  if (extra.length > 0)
    fail(`files outside README, LICENSE, package.json and dist/: ${extra.join(', ')}`);
  else pass(`${files.length} files, all README, LICENSE, package.json or dist/`);
  const targets = new Set([
    'README.md',
    'LICENSE',
    pkg.main,
    pkg.types,
    ...Object.values(pkg.bin ?? {}),
  ]);
  for (const target of Object.values(pkg.exports)) {
    for (const file of typeof target === 'string' ? [target] : Object.values(target))
      targets.add(file);
  }
  for (const paths of Object.values(pkg.typesVersions?.['*'] ?? {}))
    paths.forEach((path) => targets.add(path));
  const present = new Set(files);
  const missing = [...targets]
    .map((path) => path.replace(/^\.\//, ''))
    .filter((path) => !present.has(path));
  if (missing.length > 0)
    fail(`files that package.json points to but the tarball lacks: ${missing.join(', ')}`);
  else pass(`every file package.json points to is in the tarball (${targets.size})`);
}

// `module: commonjs` (node10 resolution) ignores `exports`: each subpath needs a typesVersions entry.
function checkTypesVersions() {
  console.log('\ntypesVersions (types for moduleResolution node10)');
  const map = pkg.typesVersions?.['*'] ?? {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (subpath === '.' || typeof target === 'string') continue;
    const key = subpath.slice(2);
    if (map[key]?.length !== 1 || map[key][0] !== target.types) {
      fail(
        `typesVersions["*"]["${key}"] must be ["${target.types}"] (the types of exports["${subpath}"])`,
      );
    } else pass(`${subpath} → ${map[key][0]}`);
  }
  if (pkg.types !== pkg.exports['.'].types)
    fail(`"types" must be ${pkg.exports['.'].types} (the root entry's types)`);
}

async function checkPublint(tarball) {
  console.log('\npublint (strict, suggestions count)');
  const bytes = readFileSync(tarball);
  const { messages } = await publint({
    pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
    level: 'suggestion',
    strict: true,
  });
  for (const message of messages)
    fail(`publint ${message.type} ${message.code}: ${formatMessage(message, pkg)}`);
  if (messages.length === 0) pass('publint: no errors, warnings or suggestions');
}

// attw flags every CommonJS-from-ESM resolution as "dynamic import only"; Node >= 20.19 and 22.12
// load ESM with require() (and TypeScript >= 5.8 with module nodenext types it), which is how this
// ESM-only package serves CommonJS apps (DESIGN §1). Every other rule stays on.
function checkAttw(tarball) {
  console.log('\n@arethetypeswrong/cli (every entry, every resolution mode)');
  try {
    run(join(root, 'node_modules/.bin/attw'), [
      tarball,
      '--ignore-rules',
      'cjs-resolves-to-esm',
      '--format',
      'table-flipped',
    ]);
    pass('attw: no problems');
  } catch {
    fail('attw reported problems (table above)');
  }
}

/** What `import(specifier)` and `require(specifier)` give in `app`: the export names, or the error. */
function load(app, specifier, mode) {
  const script =
    mode === 'import'
      ? `import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify({ keys: Object.keys(m).sort() })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
      : `try { console.log(JSON.stringify({ keys: Object.keys(require(${JSON.stringify(specifier)})).sort() })) } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`;
  const text = execFileSync(process.execPath, ['--no-warnings', '-e', script], {
    cwd: app,
    encoding: 'utf8',
  });
  return JSON.parse(text.trim().split('\n').at(-1));
}

function checkEntries(app, optionalPeers, phase) {
  for (const specifier of entrySpecifiers()) {
    const esm = load(app, specifier, 'import');
    const cjs = load(app, specifier, 'require');
    if (esm.keys !== undefined && cjs.keys !== undefined) {
      const cjsKeys = cjs.keys.filter((key) => key !== '__esModule' && key !== 'module.exports');
      if (JSON.stringify(esm.keys) === JSON.stringify(cjsKeys))
        pass(`${specifier}: import and require() give the same ${esm.keys.length} exports`);
      else fail(`${specifier}: import gives [${esm.keys}] but require() gives [${cjsKeys}]`);
      continue;
    }
    const error = esm.keys === undefined ? esm : cjs;
    const missingPeer = optionalPeers.find((peer) => error.message.includes(`'${peer}'`));
    // Only an entry other than the root may need an optional peer (DESIGN §1), and it must say which.
    if (
      phase === 'required peers' &&
      specifier !== pkg.name &&
      error.code === 'ERR_MODULE_NOT_FOUND' &&
      missingPeer !== undefined
    ) {
      if (esm.keys === undefined && cjs.keys === undefined)
        pass(
          `${specifier}: without ${missingPeer}, import and require() fail naming it ("${error.message.split(' imported from')[0]}")`,
        );
      else fail(`${specifier}: without ${missingPeer} only one of import and require() fails`);
    } else
      fail(
        `${specifier} (${phase}): ${esm.keys === undefined ? 'import' : 'require()'} failed: ${error.code} ${error.message}`,
      );
  }
}

function checkInstalledApp(tarball) {
  const app = tempDir('consumer');
  try {
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, version: '1.0.0' }, null, 2),
    );
    const optional = new Set(
      Object.keys(pkg.peerDependenciesMeta ?? {}).filter(
        (name) => pkg.peerDependenciesMeta[name].optional,
      ),
    );
    const peers = Object.keys(pkg.peerDependencies);
    const required = peers
      .filter((name) => !optional.has(name))
      .map((name) => `${name}@${installedVersion(name)}`);
    console.log(`\ntemp app ${app}: the tarball and the required peers only`);
    run('npm', ['install', '--no-audit', '--no-fund', tarball, ...required], { cwd: app });
    checkEntries(app, [...optional], 'required peers');
    const bin = Object.keys(pkg.bin ?? {})[0];
    if (bin !== undefined) {
      const usage = output(join(app, 'node_modules/.bin', bin), ['--help'], { cwd: app });
      if (usage.startsWith('Usage:')) pass(`npx ${bin} --help prints its usage`);
      else fail(`npx ${bin} --help printed: ${usage.slice(0, 200)}`);
    }
    console.log('\nsame app with every optional peer');
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        ...[...optional].map((name) => `${name}@${installedVersion(name)}`),
      ],
      { cwd: app },
    );
    checkEntries(app, [], 'every peer');
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}

const packDir = tempDir('pack');
try {
  const { tarball, files } = packTarball(packDir);
  checkContents(files);
  checkTypesVersions();
  await checkPublint(tarball);
  checkAttw(tarball);
  checkInstalledApp(tarball);
} finally {
  rmSync(packDir, { recursive: true, force: true });
}
console.log(
  problems.length === 0
    ? '\npackaging checks: all passed'
    : `\npackaging checks: ${problems.length} failed`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
