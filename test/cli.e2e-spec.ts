import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The `nresilience` CLI, run from the built dist as a user would (`npm test` builds first).
 */
const root = process.cwd();
const main = join(root, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'nresilience-cli-'));
const config = join(dir, 'resilience.json');
writeFileSync(
  config,
  JSON.stringify({
    policies: { payments: { attempts: 3 }, search: { budget: 'none' } },
    defaults: { backoff: { transientBase: '100ms' } },
  }),
);
const badConfig = join(dir, 'bad.json');
writeFileSync(badConfig, JSON.stringify({ policies: { payments: { attempts: 0 } } }));

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      { cwd: root, encoding: 'utf8' },
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

describe('nresilience simulate (CLI)', () => {
  it('lib/cli stays Nest-free: core, the testing kit and the Nest-free config layer only', () => {
    for (const name of readdirSync(join(root, 'lib/cli')).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(root, 'lib/cli', name), 'utf8');
      for (const [, path] of text.matchAll(/from '([^']+)'/g)) {
        const allowed =
          path!.startsWith('node:') ||
          path!.startsWith('./') ||
          path!.startsWith('../core/') ||
          path!.startsWith('../testing/') ||
          path!.startsWith('../config/');
        expect([name, path, allowed]).toEqual([name, path, true]);
      }
      expect(text).not.toMatch(/@nestjs\/|Date\.now|\bsetTimeout\s*\(/);
    }
  });

  it('is registered as the package bin, with a shebang', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(pkg.bin.nresilience).toBe('dist/cli/main.js');
    expect(readFileSync(main, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('exits 2 naming an unknown command and both commands there are', async () => {
    const result = await cli('simulat', '--config', config, '--policy', 'payments');
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'nresilience: command: "simulat" is invalid: must be "simulate" or "explain"',
    );
  });

  it('exits 2 naming an unknown flag', async () => {
    const result = await cli('simulate', '--config', config, '--policy', 'payments', '--sede', '4');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option '--sede'");
  });

  it('exits 2 naming a bad flag value and its rule', async () => {
    const result = await cli('simulate', '--config', config, '--policy', 'payments', '--seed', 'x');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--seed: "x" is invalid: must be an integer in [0, 4294967295]',
    );
    const rate = await cli(
      'simulate',
      '--config',
      config,
      '--policy',
      'payments',
      '--rate',
      '100001',
    );
    expect(rate.code).toBe(2);
    expect(rate.stderr).toContain(
      '--rate: "100001" is invalid: must be a number of calls per second in (0, 100000]',
    );
    const compare = await cli(
      'simulate',
      '--config',
      config,
      '--policy',
      'payments',
      '--compare',
      'attempts=0',
    );
    expect(compare.code).toBe(2);
    expect(compare.stderr).toContain(
      '--compare attempts=0: Invalid resilience config (1 problem):\n  - policies.payments.attempts: 0 is invalid: must be an integer >= 1',
    );
  });

  it('exits 2 naming a bad config value by its path, and an unknown policy', async () => {
    const result = await cli('simulate', '--config', badConfig, '--policy', 'payments');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'policies.payments.attempts: 0 is invalid: must be an integer >= 1',
    );
    const unknown = await cli('simulate', '--config', config, '--policy', 'billing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--policy: "billing" is invalid: must name a policy of');
    expect(unknown.stderr).toContain('(payments, search)');
  });

  it('exits 2 naming --svg when the chart cannot be written', async () => {
    const result = await cli(
      'simulate',
      '--config',
      config,
      '--policy',
      'payments',
      '--duration',
      '2s',
      '--rate',
      '10',
      '--svg',
      join(dir, 'missing', 'chart.svg'),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--svg: ');
    expect(result.stderr).toContain('cannot be written (ENOENT)');
    expect(result.stderr).not.toContain('unexpected');
  });

  it('prints parseable JSON for a short run with a comparison, and writes the SVG with every series', async () => {
    const svg = join(dir, 'chart.svg');
    const result = await cli(
      'simulate',
      '--config',
      config,
      '--policy',
      'payments',
      '--scenario',
      'brownout',
      '--compare',
      'budget=none',
      '--duration',
      '20s',
      '--rate',
      '100',
      '--seed',
      '7',
      '--json',
      '--svg',
      svg,
    );
    expect(result.stderr).not.toContain('unexpected');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as {
      seed: number;
      runs: {
        label: string;
        report: { calls: number; loadMultiplier: number; perSecond: unknown[] };
      }[];
    };
    expect(output.seed).toBe(7);
    expect(output.runs.map((r) => r.label)).toEqual(['payments', 'payments (budget=none)']);
    expect(output.runs[0]!.report.calls).toBe(2000);
    expect(output.runs[0]!.report.perSecond).toHaveLength(20);
    expect(output.runs[1]!.report.loadMultiplier).toBeGreaterThan(
      output.runs[0]!.report.loadMultiplier,
    );
    expect(existsSync(svg)).toBe(true);
    const text = readFileSync(svg, 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    expect(text).toContain('data-series="payments"');
    expect(text).toContain('data-series="payments (budget=none)"');
    expect(text).toContain('Requests reaching the dependency per second');
    expect(text).toContain('Availability per second');
    expect(text).toContain('Breaker state');
  });

  it('prints the report table by default', async () => {
    const result = await cli(
      'simulate',
      '--config',
      config,
      '--policy',
      'search',
      '--scenario',
      'outage',
      '--duration',
      '10s',
      '--rate',
      '50',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('LoadMultiplier');
    expect(result.stdout).toMatch(/run\s+availability/);
  });
});
