import { execFileSync } from 'node:child_process';

/**
 * A plain script whose only pending work is a retry's backoff must not exit in the middle of it
 * (Node exits with code 13 when a top-level await can never settle). Deadlines alone never hold it.
 */
describe('process lifetime', () => {
  it('a script awaiting a retry waits for the backoff and gets its result', () => {
    const script = `
      import { Backoff, Resilience } from '@nresilience/nestjs/core';
      let calls = 0;
      const policy = Resilience.http.with({ backoff: Backoff.constant(300) });
      const result = await policy.tryRun(async () => { if (++calls < 2) throw new Error('flaky'); return 'paid'; });
      console.log(JSON.stringify({ ok: result.ok, value: result.value, attempts: result.attempts.length, calls }));
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: process.cwd(),
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(JSON.parse(output.trim())).toEqual({ ok: true, value: 'paid', attempts: 2, calls: 2 });
  });
});
