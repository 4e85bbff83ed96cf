import { jest } from '@jest/globals';
import { MAX_TIMER_DELAY, SystemClock, type TimerPrimitives } from './clock.js';
import { FakeClock } from './fake-clock.js';

/** Primitives driven by hand: `fireNext` jumps to the next Node timer and runs it. */
function manualTimers() {
  let now = 0;
  let id = 0;
  const armed = new Map<number, { at: number; fn: () => void; delay: number; ref: boolean }>();
  const primitives: TimerPrimitives = {
    now: () => now,
    setTimeout: (fn, delay) => {
      armed.set(++id, { at: now + delay, fn, delay, ref: false });
      return id;
    },
    clearTimeout: (handle) => void armed.delete(handle as number),
    hold: (handle, keepAlive) => {
      const timer = armed.get(handle as number);
      if (timer !== undefined) timer.ref = keepAlive;
    },
  };
  return {
    primitives,
    armed,
    fireNext() {
      const [key, next] = [...armed.entries()].sort((a, b) => a[1].at - b[1].at)[0]!;
      armed.delete(key);
      now = next.at;
      next.fn();
    },
    get now() {
      return now;
    },
  };
}

describe('SystemClock', () => {
  it('keeps one Node timer armed for the earliest of many deadlines', () => {
    const t = manualTimers();
    const clock = new SystemClock(t.primitives);
    const fired: string[] = [];
    clock.setTimer(300, () => fired.push('c'));
    clock.setTimer(100, () => fired.push('a'));
    const b = clock.setTimer(200, () => fired.push('b'));
    expect(t.armed.size).toBe(1);
    clock.clearTimer(b);
    t.fireNext();
    expect(fired).toEqual(['a']);
    t.fireNext();
    expect(fired).toEqual(['a', 'c']);
    expect(t.now).toBe(300);
    expect(clock.pending).toBe(0);
    expect(t.armed.size).toBe(0);
  });

  it('chains a wait above 2^31-1 ms and never fires it early', () => {
    const t = manualTimers();
    const clock = new SystemClock(t.primitives);
    const callback = jest.fn();
    const wait = MAX_TIMER_DELAY * 2 + 5;
    clock.setTimer(wait, callback);
    expect([...t.armed.values()][0]!.delay).toBe(MAX_TIMER_DELAY);
    t.fireNext();
    expect(callback).not.toHaveBeenCalled();
    t.fireNext();
    expect(callback).not.toHaveBeenCalled();
    t.fireNext();
    expect(callback).toHaveBeenCalledTimes(1);
    expect(t.now).toBe(wait);
  });

  it('a cleared timer never fires; the idle Node timer fires once, finds nothing and stops', () => {
    const t = manualTimers();
    const clock = new SystemClock(t.primitives);
    const callback = jest.fn();
    const handle = clock.setTimer(3000, callback);
    clock.clearTimer(handle);
    clock.clearTimer(handle);
    expect(clock.pending).toBe(0);
    const later = jest.fn();
    clock.setTimer(5000, later);
    expect(t.armed.size).toBe(1);
    t.fireNext();
    expect([t.now, t.armed.size, later.mock.calls.length]).toEqual([3000, 1, 0]);
    t.fireNext();
    expect([t.now, t.armed.size, later.mock.calls.length]).toEqual([5000, 0, 1]);
    expect(callback).not.toHaveBeenCalled();
  });

  it('keeps the process alive only while a keepAlive timer is pending', () => {
    const t = manualTimers();
    const clock = new SystemClock(t.primitives);
    const refs = () => [...t.armed.values()].map((a) => a.ref);
    clock.setTimer(30_000, () => undefined);
    expect(refs()).toEqual([false]);
    const backoff = clock.setTimer(200, () => undefined, true);
    expect(refs()).toEqual([true]);
    clock.clearTimer(backoff);
    expect(refs()).toEqual([false]);
    clock.setTimer(100, () => undefined, true);
    expect(refs()).toEqual([true]);
    t.fireNext();
    expect([t.now, refs()]).toEqual([100, [false]]);
  });

  it('re-arms only when a new timer is due before the armed one', () => {
    const t = manualTimers();
    const clock = new SystemClock(t.primitives);
    clock.setTimer(30_000, () => undefined);
    clock.setTimer(31_000, () => undefined);
    clock.setTimer(40_000, () => undefined);
    expect([...t.armed.values()].map((a) => a.delay)).toEqual([30_000]);
    clock.setTimer(100, () => undefined);
    expect([...t.armed.values()].map((a) => a.delay)).toEqual([100]);
  });

  it('reads time from performance.now by default and its timers do fire', async () => {
    const clock = new SystemClock();
    const before = clock.now();
    await new Promise<void>((resolve) => clock.setTimer(5, resolve));
    expect(clock.now() - before).toBeGreaterThanOrEqual(4);
  });
});

describe('FakeClock', () => {
  it('fires timers in due order at their own due times', async () => {
    const clock = new FakeClock(1000);
    const seen: Array<[string, number]> = [];
    clock.setTimer(50, () => seen.push(['b', clock.now()]));
    clock.setTimer(10, () => seen.push(['a', clock.now()]));
    clock.setTimer(500, () => seen.push(['late', clock.now()]));
    await clock.advance(100);
    expect(seen).toEqual([
      ['a', 1010],
      ['b', 1050],
    ]);
    expect(clock.now()).toBe(1100);
    expect(clock.pending).toBe(1);
  });

  it('fires a timer set by a promise continuation within the same advance', async () => {
    const clock = new FakeClock();
    const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimer(ms, resolve));
    let done = -1;
    void (async () => {
      await sleep(10);
      await sleep(10);
      done = clock.now();
    })();
    await clock.advance(25);
    expect(done).toBe(20);
  });

  it('rejects a negative advance', async () => {
    await expect(new FakeClock().advance(-1)).rejects.toThrow(
      'FakeClock.advance: ms must be a finite duration in ms >= 0, got -1',
    );
  });
});
