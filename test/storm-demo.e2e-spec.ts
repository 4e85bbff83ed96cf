import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The main job end to end: the built storm demo (real Nest app, real loopback dependency, real HTTP
 * load) run as a user runs it. `npm test` builds first; this file only runs the output.
 */

const run = promisify(execFile);
const demo = fileURLToPath(new URL('../dist-sample/sample/01-storm-demo/main.js', import.meta.url));

interface RunSummary {
  calls: number;
  dependencyRequests: number;
  loadMultiplier: number;
  worstSecond: number;
  availability: number;
  degradedLoadMultiplier: number;
}

// The quick demo takes about 15 s; the bound leaves room for a busy machine but still ends a hung run.
const BOUND_MS = 60_000;

describe('storm demo (--quick --json)', () => {
  let budgetOn: RunSummary;
  let budgetOff: RunSummary;

  beforeAll(async () => {
    if (!existsSync(demo)) throw new Error(`${demo} is missing: run \`npm run build\` first`);
    // execFile rejects on a non-zero exit and on the timeout (the child is killed then).
    const { stdout } = await run(process.execPath, [demo, '--quick', '--json'], { timeout: BOUND_MS, killSignal: 'SIGKILL', maxBuffer: 1 << 20 });
    const last = stdout.trimEnd().split('\n').at(-1) ?? '';
    ({ budgetOn, budgetOff } = JSON.parse(last) as { budgetOn: RunSummary; budgetOff: RunSummary });
  }, BOUND_MS + 5_000);

  it('reports both runs', () => {
    // Call counts are not compared: on a starved machine the driver skips calls at its concurrency cap.
    for (const summary of [budgetOn, budgetOff]) {
      expect(summary.calls).toBeGreaterThan(0);
      expect(summary.dependencyRequests).toBeGreaterThan(0);
      expect(summary.availability).toBeGreaterThan(0);
      expect(summary.availability).toBeLessThanOrEqual(1);
    }
  });

  it('keeps the worst second the dependency feels lower with the budget on', () => {
    expect(budgetOn.worstSecond).toBeLessThan(budgetOff.worstSecond);
  });

  it('holds the load during the degraded phase to at most 1.2x with the budget on', () => {
    expect(budgetOn.degradedLoadMultiplier).toBeLessThanOrEqual(1.2);
    expect(budgetOff.degradedLoadMultiplier).toBeGreaterThan(budgetOn.degradedLoadMultiplier);
  });
});
