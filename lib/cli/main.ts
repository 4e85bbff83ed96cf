#!/usr/bin/env node
/**
 * The `nresilience` command (package `bin`): `nresilience simulate --config resilience.json --policy
 * payments [--scenario brownout] [--compare budget=none] [--seed 42] [--json] [--svg out.svg]`.
 * See {@link USAGE}. Exit codes: 0 done, 2 invalid arguments or config, 1 unexpected failure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { USAGE, runCli } from './cli.js';

export { USAGE };

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readFile: (path) => readFileSync(path, 'utf8'),
  writeFile: (path, text) => writeFileSync(path, text, 'utf8'),
});
