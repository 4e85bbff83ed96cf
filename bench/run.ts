/**
 * Runs every in-process benchmark in this folder, one after another, then the allocation bench in a
 * process of its own (it needs `--expose-gc` and a large young generation). Usage: `npm run bench`.
 * The stress suite (`npm run bench:stress`) and the Nest route bench (`npm run bench:nest`) start
 * processes of their own and run separately.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ALLOCATION_FLAGS } from './allocation-flags.js';

await import('./success-path.js');
await import('./simulation.js');
await import('./breaker.js');
await import('./telemetry.js');
await import('./hedging.js');
execFileSync(
  process.execPath,
  [...ALLOCATION_FLAGS, fileURLToPath(new URL('./allocation.js', import.meta.url))],
  { stdio: 'inherit' },
);
