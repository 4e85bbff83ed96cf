/** Runs every benchmark in this folder, one after another. Usage: `npm run bench`. */
await import('./success-path.js');
await import('./simulation.js');
await import('./breaker.js');
await import('./telemetry.js');
