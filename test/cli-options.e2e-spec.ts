import { describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The CLI's YAML configs, `--dependency`, `--compare` on any field, and a reader that stops early. */
const main = join(process.cwd(), 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'nresilience-cli-options-'));
const yaml = join(dir, 'resilience.yaml');
writeFileSync(
  yaml,
  '# as ResilienceModule.forRoot takes it\npolicies:\n  payments:\n    attempts: 3\n    breaker: true\ndefaults:\n  backoff: { transientBase: 100ms }\n',
);

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      { encoding: 'utf8', maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        });
      },
    );
  });
}

interface Report {
  dependency: string;
  calls: number;
  dependencyRequests: number;
}

describe('nresilience simulate options', () => {
  it('reads a YAML config, models the dependency from --dependency, and compares any policy field', async () => {
    const result = await cli(
      'simulate',
      '--config',
      yaml,
      '--policy',
      'payments',
      '--duration',
      '20s',
      '--rate',
      '100',
      '--json',
      '--dependency',
      'p50=40ms,p99=400ms,timeout=1s,workers=200,failures=0.1',
      '--compare',
      'breaker.consecutiveFailures=10,attemptTimeout=800ms',
      '--compare',
      'attempts=1',
    );
    expect([result.code, result.stderr]).toEqual([0, '']);
    const runs = (JSON.parse(result.stdout) as { runs: { label: string; report: Report }[] }).runs;
    expect(runs.map((run) => run.label)).toEqual([
      'payments',
      'payments (breaker.consecutiveFailures=10,attemptTimeout=800ms)',
      'payments (attempts=1)',
    ]);
    expect(runs[0]!.report.dependency).toBe(
      'healthy p50 40ms p99 400ms, 200 workers, timeout 1000ms; failing 10%; brownout ×8 2s–6s',
    );
    // One attempt per call: the dependency gets exactly one request per call.
    expect(runs[2]!.report.dependencyRequests).toBe(runs[2]!.report.calls);
    expect(runs[0]!.report.dependencyRequests).toBeGreaterThan(runs[0]!.report.calls);
  });

  it('exits 2 naming the --compare spec and the config path it made invalid', async () => {
    const result = await cli(
      'simulate',
      '--config',
      yaml,
      '--policy',
      'payments',
      '--compare',
      'breaker.consecutiveFailures=-1',
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'nresilience: --compare breaker.consecutiveFailures=-1: Invalid resilience config (1 problem):',
    );
    expect(result.stderr).toContain('policies.payments.breaker.consecutiveFailures: -1 is invalid');
  });

  it('exits 2 naming the YAML file, line and column of a syntax error', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'policies:\n  p: {attempts: 2\n');
    const result = await cli('simulate', '--config', bad, '--policy', 'p');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^nresilience: --config .*bad\.yaml: unparsable YAML: .* at line 3, column 1/,
    );
  });

  it('ends quietly with code 0 when the reader closes the pipe early (| head)', async () => {
    const child = spawn(
      process.execPath,
      [
        main,
        'simulate',
        '--config',
        yaml,
        '--policy',
        'payments',
        '--duration',
        '10m',
        '--rate',
        '50',
        '--json',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(
      stderr.split('\n').filter((line) => line !== '' && !line.startsWith('simulating ')),
    ).toEqual([]);
  });
});
