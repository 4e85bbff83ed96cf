#!/usr/bin/env node
/**
 * The `nresilience` command (package `bin`): `nresilience simulate --config resilience.yaml --policy
 * payments [--scenario brownout] [--dependency p50=40ms,workers=200] [--compare budget=none]
 * [--seed 42] [--json] [--svg out.svg]`.
 * See {@link USAGE}. Exit codes: 0 done, 2 invalid arguments or config, 1 unexpected failure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { USAGE, runCli } from './cli.js';

export { USAGE };

// A reader that stops early (`nresilience simulate … | head`) closes the pipe: end quietly then, as
// Unix tools do, instead of dying on the unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readFile: (path) => readFileSync(path, 'utf8'),
  writeFile: (path, text) => writeFileSync(path, text, 'utf8'),
});
