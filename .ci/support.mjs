// Helpers shared by the CI scripts: run a command, pack the package, read its entry list.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is in `.ci/`). */
export const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** The repository's package.json. */
export const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Runs a command, streaming its output; throws (with the command line) when it exits non-zero. */
export function run(command, args, options = {}) {
  console.log(`$ ${[command, ...args].join(' ')}${options.cwd ? `   (in ${options.cwd})` : ''}`);
  execFileSync(command, args, { stdio: 'inherit', ...options });
}

/** Runs a command and returns its stdout (stderr passes through). */
export function output(command, args, options = {}) {
  return execFileSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    ...options,
  });
}

/** A fresh temporary directory named for `purpose`. */
export function tempDir(purpose) {
  return mkdtempSync(join(tmpdir(), `nresilience-${purpose}-`));
}

/**
 * Packs the package as `npm publish` would; its `prepack` script builds `dist/` afresh first (so
 * nothing builds twice here, and a tarball never ships a stale build).
 * @returns the tarball's path and the file paths it holds
 */
export function packTarball(destination) {
  const [packed] = JSON.parse(
    output('npm', ['pack', '--json', '--pack-destination', destination], { cwd: root }),
  );
  return {
    tarball: join(destination, packed.filename),
    files: packed.files.map((file) => file.path),
  };
}

/**
 * Every subpath of the package's `exports` map that is code (not `./package.json`), as the
 * specifier an application imports: `@nresilience/nestjs`, `@nresilience/nestjs/core`, ….
 */
export function entrySpecifiers() {
  return Object.keys(pkg.exports)
    .filter((subpath) => !subpath.endsWith('.json'))
    .map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`));
}

/** The version of `name` installed in the repository (what its lock pins). */
export function installedVersion(name) {
  return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}
