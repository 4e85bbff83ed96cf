import { Ambient, Criticality } from './ambient-context.js';
import { AmbientHeaders, ambientFromHeaders, parseRemainingMs } from './ambient-wire.js';
import { DeadlineExceededError, PolicyConfigError } from '../errors.js';
import type { CallEvent } from '../events/call-events.js';
import { FakeClock } from '../time/fake-clock.js';
import { Resilience } from '../policy/policy.js';
import { RetryBudget } from '../budget/retry-budget.js';

describe('Ambient context', () => {
  it('is undefined outside any context and carries every field through awaits', async () => {
    expect(Ambient.current()).toBeUndefined();
    expect(Ambient.remaining()).toBeUndefined();
    expect(Ambient.criticality()).toBe('critical');
    const clock = new FakeClock(1000);
    const seen = await Ambient.run(
      { remaining: 800, criticality: 'sheddable', nestedRetry: true, clock },
      async () => {
        await new Promise((resolve) => setImmediate(resolve));
        await clock.advance(300);
        return {
          remaining: Ambient.remaining(),
          criticality: Ambient.criticality(),
          state: Ambient.current(),
        };
      },
    );
    expect(seen.remaining).toBe(500);
    expect(seen.criticality).toBe('sheddable');
    expect(seen.state).toMatchObject({ deadlineAt: 1800, nestedRetry: true, singleShot: false });
    expect(Ambient.current()).toBeUndefined();
  });

  it('only tightens the deadline in a nested context and keeps the markers once set', () => {
    const clock = new FakeClock();
    Ambient.run({ remaining: 500, nestedRetry: true, clock }, () => {
      Ambient.run({ remaining: 900, nestedRetry: false }, () =>
        expect(Ambient.remaining()).toBe(500),
      );
      Ambient.run({ remaining: 200, criticality: 'criticalPlus' }, () => {
        expect(Ambient.remaining()).toBe(200);
        expect(Ambient.current()?.nestedRetry).toBe(true);
        expect(Ambient.criticality()).toBe('criticalPlus');
      });
    });
  });

  it('enter re-runs a captured state whose deadline keeps counting', async () => {
    const clock = new FakeClock();
    const state = Ambient.run({ remaining: 500, criticality: 'sheddablePlus', clock }, () =>
      Ambient.current()!,
    );
    await clock.advance(200);
    expect(Ambient.enter(state, () => [Ambient.remaining(), Ambient.criticality()])).toEqual([
      300,
      'sheddablePlus',
    ]);
    expect(() => Ambient.enter({} as never, () => 0)).toThrow(
      'ambient: {} is invalid: must be a state read from Ambient.current()',
    );
  });

  it('names the field of a bad change', () => {
    expect(() => Ambient.run({ remaining: -1 }, () => 0)).toThrow(
      new PolicyConfigError('ambient.remaining', -1, 'must be a duration in ms >= 0 (or Infinity)'),
    );
    expect(() => Ambient.run({ remaining: Number.NaN }, () => 0)).toThrow(
      'ambient.remaining: NaN is invalid: must be a duration in ms >= 0 (or Infinity)',
    );
    expect(Ambient.run({ remaining: Infinity }, () => Ambient.remaining())).toBeUndefined(); // no deadline
    expect(() => Ambient.run({ criticality: 'urgent' as Criticality }, () => 0)).toThrow(
      'ambient.criticality: "urgent" is invalid: must be one of sheddable, sheddablePlus, critical, criticalPlus',
    );
    expect(() => Ambient.run({ singleShot: 'yes' as never }, () => 0)).toThrow(
      'ambient.singleShot: "yes" is invalid: must be true or false',
    );
    expect(() => Ambient.run({ deadline: 5 } as never, () => 0)).toThrow(
      'ambient.deadline: 5 is invalid: is not a known ambient field',
    );
  });
});

describe('wire form', () => {
  it('clamps criticality from the wire at critical and ignores unknown levels', () => {
    expect(Criticality.fromWire('Sheddable-Plus')).toBe('sheddablePlus');
    expect(Criticality.fromWire('SHEDDABLE_PLUS')).toBe('sheddablePlus');
    expect(Criticality.fromWire('criticalPlus')).toBe('critical');
    expect(Criticality.fromWire('CRITICAL_PLUS')).toBe('critical');
    expect(Criticality.fromWire('urgent')).toBeUndefined();
    expect(Criticality.fromWire(undefined)).toBeUndefined();
  });

  it('reads remaining time as whole ms only, ignoring -1, abc, fractions and values above a day', () => {
    expect(parseRemainingMs('250')).toBe(250);
    expect(parseRemainingMs(' 0 ')).toBe(0);
    for (const bad of ['-1', 'abc', '1.5', '', '86400001', '99999999999999999999', '1e3'])
      expect(parseRemainingMs(bad)).toBeUndefined();
    expect(parseRemainingMs('900, 300')).toBe(300);
    expect(parseRemainingMs(['abc', '700'])).toBe(700);
  });

  it('builds the changes a request asks for: the tighter of ours and Envoy, the marker only for 1', () => {
    const headers: Record<string, string> = {
      [AmbientHeaders.remaining]: '900',
      [AmbientHeaders.envoyTimeout]: '400',
      [AmbientHeaders.criticality]: 'critical-plus',
      [AmbientHeaders.retrying]: '1',
    };
    expect(ambientFromHeaders((name) => headers[name])).toEqual({
      remaining: 400,
      criticality: 'critical',
      nestedRetry: true,
    });
    expect(
      ambientFromHeaders(
        (name) => ({ [AmbientHeaders.retrying]: 'yes', [AmbientHeaders.remaining]: 'abc' })[name],
      ),
    ).toEqual({});
  });
});

describe('policies in the ambient context', () => {
  function setup(changes: Parameters<typeof Resilience.default.with>[0]) {
    const clock = new FakeClock();
    const events: CallEvent[] = [];
    const policy = Resilience.default
      .with({ name: 'api', clock, random: () => 0.5, budget: RetryBudget.none, ...changes })
      .withListener((e) => events.push(e));
    return { clock, events, policy };
  }

  it('useAmbientDeadline bounds the call by the caller time left when it is tighter', async () => {
    const { clock, policy } = setup({ deadline: 5000, useAmbientDeadline: true });
    const bounds: number[] = [];
    const call = Ambient.run({ remaining: 300, clock }, () =>
      policy.tryRun(({ signal, bound }) => {
        bounds.push(bound);
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        );
      }),
    );
    await clock.advance(299);
    expect(bounds).toEqual([300]);
    await clock.advance(1);
    const result = await call;
    expect(result.reason).toBe('deadlineExceeded');
    expect(result.error).toBeInstanceOf(DeadlineExceededError);
    expect((result.error as DeadlineExceededError).deadline).toBe(300);
    expect(result.duration).toBe(300);
  });

  it('never extends its own deadline from a looser inbound value', async () => {
    const { clock, policy } = setup({ deadline: 200, useAmbientDeadline: true });
    const bounds: number[] = [];
    const call = Ambient.run({ remaining: 10_000, clock }, () =>
      policy.tryRun(({ bound }) => (bounds.push(bound), new Promise(() => undefined))),
    );
    await clock.advance(200);
    expect((await call).duration).toBe(200);
    expect(bounds).toEqual([200]);
  });

  it('starts no attempt when the caller has no time left', async () => {
    const { clock, policy } = setup({ useAmbientDeadline: true });
    let ran = 0;
    const result = await Ambient.run({ remaining: 0, clock }, () => policy.tryRun(() => ++ran));
    expect(ran).toBe(0);
    expect(result).toMatchObject({ ok: false, reason: 'deadlineExceeded', attempts: [] });
  });

  it('ignores the ambient deadline unless the policy opts in', async () => {
    const { clock, policy } = setup({});
    const result = await Ambient.run({ remaining: 0, clock }, () =>
      policy.tryRun(({ bound }) => bound),
    );
    expect(result).toMatchObject({ ok: true, value: Infinity });
  });

  it('reports nestedRetry once per call made for a retrying caller, and not for a single-attempt policy', async () => {
    const { events, policy } = setup({});
    await Ambient.run({ nestedRetry: true }, () => policy.run(() => 'ok'));
    expect(events.map((e) => e.kind)).toEqual(['nestedRetry', 'attempt', 'succeeded']);
    expect(String(events[0])).toBe('[api] NestedRetry (0ms)');
    events.length = 0;
    await Ambient.run({ nestedRetry: true }, () => policy.with({ attempts: 1 }).run(() => 'ok'));
    expect(events.map((e) => e.kind)).toEqual(['attempt', 'succeeded']);
  });

  it('makes one attempt per call inside a single-shot scope', async () => {
    const { events, policy } = setup({});
    let attempts = 0;
    const result = await Ambient.singleShot(() =>
      policy.tryRun(() => {
        attempts++;
        throw new Error('down');
      }),
    );
    expect(attempts).toBe(1);
    expect(result.reason).toBe('attemptsExhausted');
    expect(events.map((e) => e.kind)).toEqual(['attempt', 'failed']);
  });
});
