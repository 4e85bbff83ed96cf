import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { Resilience } from './policy.js';
import { FakeClock } from '../time/fake-clock.js';
import {
  type ResilienceWarningCode,
  ResilienceWarningCodes,
  setWarningSink,
} from '../diagnostics/warnings.js';

const warnings: [ResilienceWarningCode, string][] = [];
const previous = setWarningSink((code, message) => warnings.push([code, message]));
afterEach(() => void warnings.splice(0));
afterAll(() => void setWarningSink(previous));

const clock = new FakeClock();

describe('deadline that cannot hold the attempts (warned at first use)', () => {
  it('attemptTimeout at the deadline: one warning naming the policy, the values and the fix', async () => {
    const policy = Resilience.default.with({
      name: 'checks-a',
      attemptTimeout: 5000,
      deadline: 5000,
      clock,
    });
    expect(warnings).toEqual([]);
    await policy.run(() => 'ok');
    await policy.run(() => 'ok');
    expect(warnings).toEqual([
      [
        ResilienceWarningCodes.deadlineFitsAttempts,
        "policy 'checks-a': attemptTimeout (5000 ms) is not shorter than deadline (5000 ms), so a slow first attempt uses the whole call and no retry can follow. " +
          'Make attemptTimeout shorter than the deadline (about deadline / attempts) or drop one of them.',
      ],
    ]);
  });

  it('timeouts alone pass the deadline before the last attempt: says how many fit', async () => {
    await Resilience.default
      .with({ name: 'checks-b', attempts: 5, attemptTimeout: 2000, deadline: 3000, clock })
      .run(() => 1);
    expect(warnings.map(([, message]) => message)).toEqual([
      "policy 'checks-b': deadline 3000 ms passes before attempt 5 can start when attempts time out (4 × attemptTimeout 2000 ms, backoff not counted): " +
        'at most 2 of the 5 attempts can run. Raise deadline above 8000 ms, shorten attemptTimeout, or set attempts to 2.',
    ]);
  });

  it('once per name, however many instances; judged on the finished chain, not its steps', async () => {
    for (let i = 0; i < 3; i++)
      await Resilience.http.with({ name: 'checks-c', attemptTimeout: 40_000, clock }).run(() => i);
    expect(warnings).toHaveLength(1);
    // The intermediate value (30 s preset deadline, 40 s timeout) is never run: no warning.
    await Resilience.http
      .with({ name: 'checks-d', attemptTimeout: 40_000, clock })
      .with({ deadline: 200_000 })
      .run(() => 1);
    // 2 × 1000 < 3000 fits; no deadline or no attemptTimeout says nothing.
    await Resilience.default
      .with({ name: 'checks-e', attempts: 3, attemptTimeout: 1000, deadline: 3000, clock })
      .run(() => 1);
    await Resilience.http.with({ name: 'checks-f', attempts: 9, clock }).run(() => 1);
    expect(warnings).toHaveLength(1);
  });
});

describe('listeners replaced by with({ onEvent })', () => {
  const log = (): void => undefined;

  it('warns when the policy had a listener, once per name', () => {
    const traced = Resilience.default.with({ name: 'checks-g' }).withListener(log);
    traced.with({ onEvent: log });
    traced.with({ onEvent: log });
    expect(warnings).toEqual([
      [
        ResilienceWarningCodes.replacedListeners,
        "policy 'checks-g': with({ onEvent }) replaced the listeners it had, so its telemetry and logging stopped. Use withListener(fn) to add a listener instead.",
      ],
    ]);
  });

  it('is quiet for a first listener, for withListener, and for a replacement made on purpose (remove, then add)', () => {
    const first = Resilience.default.with({ name: 'checks-h', onEvent: log });
    first.withListener(log);
    first.with({ onEvent: undefined }).withListener(log);
    first.with({ attempts: 2 });
    expect(warnings).toEqual([]);
  });

  it('a throwing sink loses only the warning', () => {
    const mine = setWarningSink(() => {
      throw new Error('sink down');
    });
    try {
      expect(() =>
        Resilience.default.with({ name: 'checks-i', onEvent: log }).with({ onEvent: log }),
      ).not.toThrow();
    } finally {
      setWarningSink(mine);
    }
  });
});
