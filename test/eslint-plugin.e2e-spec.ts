import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = process.cwd();
const fixtures = 'test/fixtures/eslint';

interface LintResult {
  filePath: string;
  messages: { ruleId: string | null; line: number; severity: number; message: string }[];
}

/** `npx eslint` over `paths` with the fixtures' config (the built plugin, by the package name). */
function eslint(paths: string[]): { status: number; results: LintResult[] } {
  const args = [
    'eslint',
    '--config',
    join(fixtures, 'eslint.config.js'),
    '--format',
    'json',
    ...paths,
  ];
  try {
    return {
      status: 0,
      results: JSON.parse(
        execFileSync('npx', args, { cwd: root, encoding: 'utf8' }),
      ) as LintResult[],
    };
  } catch (error) {
    const failed = error as { status: number; stdout: string };
    return { status: failed.status, results: JSON.parse(failed.stdout) as LintResult[] };
  }
}

/** `{ 'bad/x.ts': ['9 nresilience/x', …] }` for every linted file. */
function byFile(results: LintResult[]): Record<string, string[]> {
  return Object.fromEntries(
    results.map((r) => [
      relative(join(root, fixtures), r.filePath),
      r.messages.map((m) => `${m.line} ${m.ruleId}`),
    ]),
  );
}

describe('the ESLint plugin through npx eslint', () => {
  it('flags every bad fixture, at the lines of the mistakes, with the rule the file is named for', () => {
    const { status, results } = eslint([join(fixtures, 'bad')]);
    expect(status).toBe(1);
    expect(byFile(results)).toEqual({
      'bad/no-per-call-policy.ts': [
        '9 nresilience/no-per-call-policy',
        '14 nresilience/no-per-call-policy',
        '19 nresilience/no-per-call-policy',
      ],
      'bad/deadline-fits-attempts.ts': [
        '5 nresilience/deadline-fits-attempts',
        '11 nresilience/deadline-fits-attempts',
      ],
      'bad/resilient-method.ts': [
        '9 nresilience/resilient-method',
        '14 nresilience/resilient-method',
        '20 nresilience/resilient-method',
      ],
      'bad/attempt-signal-passed.ts': ['7 nresilience/attempt-signal-passed'],
      'bad/no-replaced-listeners.ts': [
        '8 nresilience/no-replaced-listeners',
        '15 nresilience/no-replaced-listeners',
      ],
      'bad/no-rejected-call-retry.ts': [
        '10 nresilience/no-rejected-call-retry',
        '20 nresilience/no-rejected-call-retry',
      ],
    });
    // The heuristic rule warns; the others are errors.
    const severities = new Set(
      results.flatMap((r) => r.messages.map((m) => `${m.ruleId} ${m.severity}`)),
    );
    expect([...severities].filter((s) => s.startsWith('nresilience/no-per-call-policy'))).toEqual([
      'nresilience/no-per-call-policy 1',
    ]);
    expect(
      [...severities].filter(
        (s) => !s.startsWith('nresilience/no-per-call-policy') && !s.endsWith(' 2'),
      ),
    ).toEqual([]);
  });

  it('passes every good fixture', () => {
    const { status, results } = eslint([join(fixtures, 'good')]);
    expect(byFile(results)).toEqual(
      Object.fromEntries(
        readdirSync(join(root, fixtures, 'good')).map((name) => [`good/${name}`, []]),
      ),
    );
    expect(status).toBe(0);
  });

  it("passes the project's own samples, benchmarks and docs examples", () => {
    const { status, results } = eslint(['sample', 'bench', 'docs/examples']);
    expect(
      results
        .filter((r) => r.messages.length > 0)
        .map((r) => `${relative(root, r.filePath)}: ${r.messages.map((m) => m.ruleId).join(', ')}`),
    ).toEqual([]);
    expect(results.length).toBeGreaterThan(20);
    expect(status).toBe(0);
  });

  it('has a good and a bad fixture for each rule of the recommended config', async () => {
    const { default: plugin } = await import('@nresilience/nestjs/eslint-plugin');
    const rules = Object.keys(plugin.rules).sort();
    expect(Object.keys(plugin.configs.recommended.rules ?? {}).sort()).toEqual(
      rules.map((name) => `nresilience/${name}`),
    );
    expect(
      readdirSync(join(root, fixtures, 'bad'))
        .map((name) => name.replace(/\.ts$/, ''))
        .sort(),
    ).toEqual(rules);
    expect(
      readdirSync(join(root, fixtures, 'good'))
        .map((name) => name.replace(/\.ts$/, ''))
        .sort(),
    ).toEqual(rules);
  });
});
