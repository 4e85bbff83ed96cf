import { readFileSync } from 'node:fs';
import { runCli } from './cli.js';
import type { CliIo } from './cli-io.js';

const CONFIG = `
defaults:
  attemptTimeout: 2s
policies:
  base:
    preset: http
    attempts: 4
  payments:
    extends: base
    limit: { concurrency: 10, queue: 5 }
`;

function io(files: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const value: CliIo = {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    readFile: (path) => {
      if (files[path] === undefined)
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      return files[path]!;
    },
    writeFile: () => undefined,
  };
  return { value, out, err };
}

describe('nresilience explain', () => {
  it('prints what docs/explain.md shows for its file', async () => {
    const doc = readFileSync('docs/explain.md', 'utf8');
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
    const text = /```text\n([\s\S]*?)```/.exec(doc)![1]!;
    const { value, out } = io({ 'resilience.yaml': yaml });
    expect(
      await runCli(['explain', '--config', 'resilience.yaml', '--policy', 'payments'], value),
    ).toBe(0);
    expect(out.join('')).toBe(text);
  });

  it('prints the resolved policy (preset, extends, defaults applied) and what each number means', async () => {
    const { value, out, err } = io({ 'resilience.yaml': CONFIG });
    expect(
      await runCli(['explain', '--config', 'resilience.yaml', '--policy', 'payments'], value),
    ).toBe(0);
    expect(err).toEqual([]);
    expect(out.join('')).toBe(
      [
        "resolved from preset http, extends base, with the file's defaults underneath",
        'policy payments',
        '  attempts        4 in total (3 retries) [warm]',
        '  deadline        30000 ms for the whole call (attempts, backoff, pauses) [warm]',
        '  attemptTimeout  2000 ms per attempt (a stream: to its first element, then each silence) [warm]',
        '  backoff         exponential from 100 ms (throttled 1000 ms) ×2 per retry, at most 30000 ms, full jitter [warm]',
        '  budget          retries funded from 30 tokens — 30 tokens left (0 % spent) [warm]',
        '  breaker         trips on a run of Transient failures improbable at the error rate seen (5 from cold), never while ≥ 50 % of recent attempts succeeded; breaks of 1000 ms — closed; 0 of 0 attempts failed in the trip window, a run of 0 [cold]',
        '  limit           concurrency, queue of 5 — limit 10, 0 in flight, 0 queued [warm]',
        '  hedge           not configured',
        "  attemptCeiling  3 × the p95 of successful attempts over 5 min, when shorter than the attempt's bound — not armed (0 of 100 successes seen) [cold]",
        '  saturation      not configured',
        '  restarts        3 re-opens of a checkpointed stream [warm]',
        '',
      ].join('\n'),
    );
  });

  it('names a missing option or an unknown policy, exit 2', async () => {
    const missing = io({ 'resilience.yaml': CONFIG });
    expect(await runCli(['explain', '--config', 'resilience.yaml'], missing.value)).toBe(2);
    expect(missing.err.join('')).toBe(
      'nresilience: --policy: missing: is required: the name of a policy in the config\n',
    );
    const unknown = io({ 'resilience.yaml': CONFIG });
    expect(
      await runCli(['explain', '--config', 'resilience.yaml', '--policy', 'ledger'], unknown.value),
    ).toBe(2);
    expect(unknown.err.join('')).toBe(
      'nresilience: --policy: "ledger" is invalid: must name a policy of resilience.yaml (base, payments)\n',
    );
  });
});
