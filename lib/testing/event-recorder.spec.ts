import { getEventListeners } from 'node:events';
import { CallEvent, FakeClock, Resilience, RetryBudget } from '../core/index.js';
import { EventRecorder } from './event-recorder.js';
import { Sequence } from './sequence.js';

function event(kind: CallEvent['kind'], isTerminal = false): CallEvent {
  return new CallEvent({
    kind,
    policy: 'p',
    attempt: 1,
    reason: isTerminal ? 'succeeded' : undefined,
    isTerminal,
  });
}

describe('EventRecorder', () => {
  it('records through a detached `record` and exposes events, kinds, ofKind, terminal', () => {
    const recorder = new EventRecorder();
    const { record } = recorder;
    const a = event('attempt');
    const r = event('retrying');
    const b = event('attempt');
    const s = event('succeeded', true);
    for (const e of [a, r, b, s]) record(e);
    expect(recorder.events).toEqual([a, r, b, s]);
    expect(recorder.kinds).toEqual(['attempt', 'retrying', 'attempt', 'succeeded']);
    expect(recorder.ofKind('attempt')).toEqual([a, b]);
    expect(recorder.terminal).toEqual([s]);
    recorder.clear();
    expect(recorder.events).toEqual([]);
    expect(recorder.kinds).toEqual([]);
  });

  it('reads a scripted call through the real policy on a FakeClock: intent, timing and value', async () => {
    const clock = new FakeClock();
    const recorder = new EventRecorder();
    const policy = Resilience.default
      .with({ name: 'payments', clock, random: () => 0.5, budget: RetryBudget.none })
      .withListener(recorder.record);
    const seq = Sequence.for<string>({ clock })
      .throws(Object.assign(new Error('reset'), { name: 'ResetError' }))
      .delays(30)
      .returns('paid');

    const call = policy.run((ctx) => seq.next(ctx));
    // Backoff after attempt 1 is 50 ms (half of 100 with random 0.5); attempt 2 then takes 30 ms.
    await clock.advance(79);
    expect(recorder.kinds).toEqual(['attempt', 'retrying']);
    await clock.advance(1);
    await expect(call).resolves.toBe('paid');
    expect(seq.callCount).toBe(2);
    expect(recorder.kinds).toEqual(['attempt', 'retrying', 'attempt', 'succeeded']);
    expect(recorder.toString().split('\n')).toEqual([
      '[payments] Attempt #1 Transient (0ms) ResetError',
      '[payments] Retrying #1 Transient (0ms) +50ms ResetError',
      '[payments] Attempt #2 Ok (30ms)',
      '[payments] Succeeded #2 (80ms)',
    ]);
    expect(clock.pending).toBe(0);
  });

  it('a caller abort during a scripted delay stops the call at once and leaves no timer or listener', async () => {
    const clock = new FakeClock();
    const recorder = new EventRecorder();
    const policy = Resilience.default
      .with({ clock, budget: RetryBudget.none })
      .withListener(recorder.record);
    const seq = Sequence.for<string>({ clock }).delays(10_000).returns('late');
    const controller = new AbortController();
    const call = policy.tryRun((ctx) => seq.next(ctx), { signal: controller.signal });
    await clock.advance(100);
    const reason = new Error('client went away');
    controller.abort(reason);
    const result = await call;
    expect(result.ok).toBe(false);
    expect(result.error).toBe(reason);
    expect(result.reason).toBe('cancelled');
    expect(seq.callCount).toBe(1);
    expect(recorder.terminal).toHaveLength(1);
    expect(clock.pending).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
