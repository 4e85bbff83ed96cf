import { Backoff } from '../backoff/backoff.js';
import { Resilience } from './policy.js';
import type { CallWrapper } from './policy-options.js';

describe('Policy call wrapper (around)', () => {
  const trace: string[] = [];
  const around: CallWrapper = async (call, policy) => {
    trace.push(`open ${policy.name}`);
    try {
      return await call();
    } finally {
      trace.push(`close ${policy.name}`);
    }
  };
  beforeEach(() => trace.splice(0));

  it('wraps each logical call of run and tryRun once, whatever the attempts', async () => {
    let n = 0;
    const policy = Resilience.default.with({ name: 'p', around, backoff: Backoff.none });
    await expect(
      policy.run(() => {
        trace.push('attempt');
        if (++n === 1) throw new Error('blip');
        return 1;
      }),
    ).resolves.toBe(1);
    await expect(policy.tryRun(() => 2)).resolves.toMatchObject({ ok: true, value: 2 });
    expect(trace).toEqual(['open p', 'attempt', 'attempt', 'close p', 'open p', 'close p']);
  });

  it('is given the instance that runs, whose breaker and budget are in use', async () => {
    const seen: unknown[] = [];
    const wrapped = Resilience.default.with({ around: (call, policy) => (seen.push(policy), call()) });
    const derived = wrapped.withListener(() => undefined);
    await derived.run(() => 1);
    expect(seen).toEqual([derived]);
  });

  it('withListener keeps it; with({ onEvent }) drops it unless given again', () => {
    const policy = Resilience.default.with({ around });
    expect(policy.withListener(() => {}).options.around).toBe(around);
    expect(policy.with({ onEvent: () => {} }).options.around).toBeUndefined();
    expect(policy.with({ onEvent: () => {}, around }).options.around).toBe(around);
    expect(policy.with({ name: 'x' }).options.around).toBe(around);
  });

  it('is validated like any option', () => {
    expect(() => Resilience.default.with({ around: 3 as never })).toThrow('around: 3 is invalid: must be a function');
  });
});
