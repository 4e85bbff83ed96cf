import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The main job end to end: the built storm demo's act 1 (real Nest app, real loopback dependency,
 * real HTTP load) run as a user runs it. `npm test` builds first; this file only runs the output.
 * Act 2 (the chain of processes) has its own file, `storm-demo-chain.e2e-spec.ts`.
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
  healthyAvailability: number;
  machine: {
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
    cpuPerSecond: number;
    cpuWaitShare: number | null;
  };
}

interface Output {
  budgetOn: RunSummary;
  budgetOff: RunSummary;
  verdict: { kind: 'held' | 'notHeld' | 'machineTooSlow'; reasons: string[] };
  load: { loadAverage: number; cores: number };
}

// The quick demo takes about 22 s; the bound leaves room for a busy machine but still ends a hung run.
const BOUND_MS = 90_000;
// A starved machine is a verdict of its own (exit 5), not a failure of the demo.
const MACHINE_TOO_SLOW = 5;

describe('storm demo (--quick --json)', () => {
  let budgetOn: RunSummary;
  let budgetOff: RunSummary;
  let output: Output;
  let code: number;
  let stdout: string;
  let stderr: string;

  beforeAll(async () => {
    if (!existsSync(demo)) throw new Error(`${demo} is missing: run \`npm run build\` first`);
    // execFile rejects on a non-zero exit (with the output on the error) and on the timeout (the child is killed then).
    try {
      ({ stdout, stderr } = await run(process.execPath, [demo, '--act', '1', '--quick', '--json'], {
        timeout: BOUND_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 1 << 20,
      }));
      code = 0;
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      if (failed.code !== MACHINE_TOO_SLOW) throw error;
      ({
        code,
        stdout = '',
        stderr = '',
      } = failed as { code: number; stdout?: string; stderr?: string });
    }
    output = JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? '') as Output;
    ({ budgetOn, budgetOff } = output);
  }, BOUND_MS + 5_000);

  it('closes everything it opened and reports no problem with itself', () => {
    // Exit 3 and these lines are what a socket or listener left open, or an app still working, look like.
    expect(stderr).not.toMatch(
      /still alive after closing|still open .* after closing|still calling the dependency/,
    );
  });

  it('exits 0 when the budget held, 5 (and says so) when the machine was too slow to tell', () => {
    if (output.verdict.kind === 'machineTooSlow') {
      expect(code).toBe(MACHINE_TOO_SLOW);
      expect(stdout).toContain(
        `verdict: none — this machine was too slow for the numbers above to mean anything (load average ${output.load.loadAverage}`,
      );
      // The verdict rests on the runs' own machine check: distorted, and waiting for a CPU.
      const starved = (run: RunSummary) =>
        (run.healthyAvailability < 0.95 || run.machine.loopDelayP99Ms > 250) &&
        (run.machine.cpuWaitShare === null || run.machine.cpuWaitShare >= 0.5);
      expect(starved(budgetOn) || starved(budgetOff)).toBe(true);
    } else {
      expect([code, output.verdict.kind]).toEqual([0, 'held']);
      expect(stdout).toContain('verdict: the retry budget held');
    }
  });

  it('reports both runs', () => {
    // Call counts are not compared: on a starved machine the driver skips calls at its concurrency cap.
    for (const summary of [budgetOn, budgetOff]) {
      expect(summary.calls).toBeGreaterThan(0);
      expect(summary.dependencyRequests).toBeGreaterThan(0);
      // A starved machine may answer nothing at all in time.
      expect(summary.availability).toBeGreaterThanOrEqual(
        output.verdict.kind === 'machineTooSlow' ? 0 : Number.MIN_VALUE,
      );
      expect(summary.availability).toBeLessThanOrEqual(1);
    }
  });

  // On a machine too slow for the numbers to mean anything there is nothing to hold the library to.
  const measured = () => output.verdict.kind !== 'machineTooSlow';

  it('keeps the worst second the dependency feels lower with the budget on', () => {
    if (measured()) expect(budgetOn.worstSecond).toBeLessThan(budgetOff.worstSecond);
  });

  it('holds the load during the degraded phase to at most 1.2x with the budget on', () => {
    if (!measured()) return;
    expect(budgetOn.degradedLoadMultiplier).toBeLessThanOrEqual(1.2);
    expect(budgetOff.degradedLoadMultiplier).toBeGreaterThan(budgetOn.degradedLoadMultiplier);
  });
});
