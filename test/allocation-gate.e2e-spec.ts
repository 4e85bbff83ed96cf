import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ALLOCATION_FLAGS } from '../bench/allocation-flags.js';

/**
 * The allocation gate (issue 15, DESIGN §10): heap bytes per call of each preset's success path, above
 * the raw awaited call's, may not grow past the checked-in ceilings. Runs the built
 * `bench/allocation.ts` in its own process (it needs `--expose-gc` and a young generation no measured
 * loop fills). Allocation counts are a property of the code, not of the machine's load: repeated runs
 * agree within about 1 % (see the README's cost section), so the ceilings carry a few percent of slack.
 */

const run = promisify(execFile);
const bench = fileURLToPath(new URL('../dist-sample/bench/allocation.js', import.meta.url));
const ceilingsFile = fileURLToPath(new URL('../bench/allocation-ceilings.json', import.meta.url));

interface Row {
  name: string;
  bytes: number;
  excess: number;
}

type Ceilings = Record<string, number>;

function ceilingsFor(major: string): Ceilings {
  const all = JSON.parse(readFileSync(ceilingsFile, 'utf8')) as Record<string, Ceilings | string>;
  const listed = all[major];
  if (typeof listed === 'object') return listed;
  // A Node major without its own line is held to the loosest ceiling of each preset.
  const merged: Ceilings = {};
  for (const entry of Object.values(all)) {
    if (typeof entry !== 'object') continue;
    for (const [name, bytes] of Object.entries(entry)) merged[name] = Math.max(merged[name] ?? 0, bytes);
  }
  return merged;
}

describe('allocation gate', () => {
  let rows: Row[];
  const ceilings = ceilingsFor(process.versions.node.split('.')[0]!);

  beforeAll(async () => {
    if (!existsSync(bench)) throw new Error(`${bench} is missing: run \`npm run build\` first`);
    const { stdout } = await run(process.execPath, [...ALLOCATION_FLAGS, bench, '--json'], { timeout: 60_000, killSignal: 'SIGKILL' });
    ({ rows } = JSON.parse(stdout.trimEnd().split('\n').at(-1)!) as { rows: Row[] });
  }, 65_000);

  it('measures every gated preset and the raw call', () => {
    expect(rows.map((row) => row.name)).toEqual(['raw', ...Object.keys(ceilings)]);
    expect(rows[0]!.bytes).toBeGreaterThan(0);
  });

  it.each(Object.entries(ceilings))('%s allocates no more than its ceiling above the raw call', (name, ceiling) => {
    expect(rows.find((row) => row.name === name)!.excess).toBeLessThanOrEqual(ceiling);
  });
});
