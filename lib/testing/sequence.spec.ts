import { getEventListeners } from 'node:events';
import { FakeClock, PolicyConfigError } from '../core/index.js';
import { Sequence } from './sequence.js';

/** Observes a promise's state without awaiting it. */
function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('Sequence', () => {
  it('plays throws and returns in order, counting calls', async () => {
    const boom = new Error('reset');
    const seq = Sequence.for<string>().throws(boom, 2).returns('a').returns('b');
    expect(seq.remaining).toBe(4);
    await expect(seq.next()).rejects.toBe(boom);
    await expect(seq.next()).rejects.toBe(boom);
    await expect(seq.next()).resolves.toBe('a');
    await expect(seq.next()).resolves.toBe('b');
    expect(seq.callCount).toBe(4);
    expect(seq.remaining).toBe(0);
  });

  it('repeats the last step once the script is used up', async () => {
    const seq = Sequence.for<number>().returns(1).returns(2, 2);
    const values = [];
    for (let i = 0; i < 6; i++) values.push(await seq.next());
    expect(values).toEqual([1, 2, 2, 2, 2, 2]);
    expect(seq.callCount).toBe(6);
  });

  it('resumes with steps appended after the script was used up', async () => {
    const seq = Sequence.for<number>().returns(1);
    await seq.next();
    await seq.next();
    seq.returns(9);
    await expect(seq.next()).resolves.toBe(9);
  });

  it('a delay belongs to the next outcome: settles at 100 ms, not at 99', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(100).returns('slow').returns('fast');
    const call = track(seq.next());
    expect(clock.pending).toBe(1);
    await clock.advance(99);
    expect(call.settled).toBe(false);
    await clock.advance(1);
    expect(call).toEqual({ settled: true, value: 'slow' });
    await expect(seq.next()).resolves.toBe('fast');
    expect(clock.pending).toBe(0);
    expect(seq.callCount).toBe(2);
  });

  it('a delayed throw rejects after the delay', async () => {
    const clock = new FakeClock();
    const boom = new Error('late');
    const seq = Sequence.for<string>({ clock }).delays(50).throws(boom);
    const call = track(seq.next());
    await clock.advance(49);
    expect(call.settled).toBe(false);
    await clock.advance(1);
    expect(call).toEqual({ settled: true, error: boom });
  });

  it('delays(ms, times) applies to each of the next `times` outcomes', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(100, 2).returns('x', 3);
    const first = track(seq.next());
    const second = track(seq.next());
    await clock.advance(100);
    expect(first.value).toBe('x');
    expect(second.value).toBe('x');
    const third = track(seq.next());
    await clock.advance(0);
    expect(third.value).toBe('x');
    expect(clock.pending).toBe(0);
  });

  it('back-to-back delays add up for the same outcome', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(100).delays(50).returns('v');
    const call = track(seq.next());
    await clock.advance(149);
    expect(call.settled).toBe(false);
    await clock.advance(1);
    expect(call.value).toBe('v');
  });

  it('overlapping delays(ms, times) add per outcome: 150 then 100', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(100, 2).delays(50).returns('a').returns('b');
    const a = track(seq.next());
    await clock.advance(150);
    expect(a.value).toBe('a');
    const b = track(seq.next());
    await clock.advance(99);
    expect(b.settled).toBe(false);
    await clock.advance(1);
    expect(b.value).toBe('b');
  });

  it('the repeated last step keeps its delay', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(10).returns('r');
    await clock.advance(0);
    for (let i = 0; i < 3; i++) {
      const call = track(seq.next());
      await clock.advance(9);
      expect(call.settled).toBe(false);
      await clock.advance(1);
      expect(call.value).toBe('r');
    }
  });

  it('an abort stops a scripted delay at once, with the signal reason, clearing the timer and the listener', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(1_000).returns('never').returns('next');
    const controller = new AbortController();
    const call = track(seq.next({ signal: controller.signal }));
    await clock.advance(10);
    expect(clock.pending).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await Promise.resolve();
    await Promise.resolve();
    expect(call).toEqual({ settled: true, error: reason });
    expect(clock.pending).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.now()).toBe(10);
    // The aborted call consumed its step.
    await expect(seq.next()).resolves.toBe('next');
    expect(seq.callCount).toBe(2);
  });

  it('removes its signal listener when the delay completes normally', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(5, 20).returns('ok', 20);
    const controller = new AbortController();
    const calls = Array.from({ length: 20 }, () => seq.next({ signal: controller.signal }));
    // Twenty waits sharing one signal put a single listener on it (no MaxListeners warning)…
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await clock.advance(5);
    await expect(Promise.all(calls)).resolves.toHaveLength(20);
    // …and leave none behind.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.pending).toBe(0);
  });

  it('an already-aborted signal rejects a delayed step without setting a timer', async () => {
    const clock = new FakeClock();
    const seq = Sequence.for<string>({ clock }).delays(100).returns('x');
    const controller = new AbortController();
    controller.abort();
    const error = await seq.next({ signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(clock.pending).toBe(0);
  });

  it('a step without a delay ignores the signal and does not read it', async () => {
    const seq = Sequence.for<string>().returns('now');
    const context = {
      get signal(): AbortSignal {
        throw new Error('signal read');
      },
    };
    await expect(seq.next(context)).resolves.toBe('now');
  });

  it('explains an empty script and a trailing delay', async () => {
    await expect(Sequence.for<string>().next()).rejects.toThrow(
      'Sequence: the script is empty; add returns() or throws() before calling next()',
    );
    const dangling = Sequence.for<string>().returns('a').delays(5, 2);
    await expect(dangling.next()).rejects.toThrow(
      'Sequence: the script ends with delays() for 2 outcome(s) that were never added; follow delays() with returns() or throws()',
    );
    expect(dangling.callCount).toBe(1);
  });

  it('validates times, ms and clock with PolicyConfigError', () => {
    const seq = Sequence.for<string>();
    expect(() => seq.returns('x', 0)).toThrow(
      new PolicyConfigError('times', 0, 'must be an integer >= 1'),
    );
    expect(() => seq.throws(new Error(), 1.5)).toThrow(
      'times: 1.5 is invalid: must be an integer >= 1',
    );
    expect(() => seq.delays(-1)).toThrow('ms: -1 is invalid: must be a finite duration in ms >= 0');
    expect(() => seq.delays(Infinity)).toThrow(
      'ms: Infinity is invalid: must be a finite duration in ms >= 0',
    );
    expect(() => Sequence.for({ clock: {} as never })).toThrow(PolicyConfigError);
  });
});
