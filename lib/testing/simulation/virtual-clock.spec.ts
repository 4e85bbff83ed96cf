import { VirtualClock } from './virtual-clock.js';

describe('VirtualClock', () => {
  it('jumps to the next due timer and fires every timer due at that instant, in the order set', () => {
    const clock = new VirtualClock();
    const fired: string[] = [];
    clock.setTimer(50, () => fired.push(`b@${clock.now()}`));
    clock.setTimer(20, () => fired.push(`a@${clock.now()}`));
    clock.setTimer(50, () => {
      fired.push(`c@${clock.now()}`);
      clock.setTimer(0, () => fired.push(`d@${clock.now()}`)); // same instant: same batch
    });
    expect(clock.fireDue()).toBe(true);
    expect(fired).toEqual(['a@20']);
    expect(clock.fireDue()).toBe(true);
    expect(fired).toEqual(['a@20', 'b@50', 'c@50', 'd@50']);
    expect(clock.fireDue()).toBe(false);
    expect(clock.now()).toBe(50);
  });

  it('clears timers (idempotently) and honours the limit', () => {
    const clock = new VirtualClock(100);
    const fired: number[] = [];
    const a = clock.setTimer(10, () => fired.push(1));
    clock.setTimer(30, () => fired.push(2));
    clock.clearTimer(a);
    clock.clearTimer(a);
    expect(clock.pending).toBe(1);
    expect(clock.nextDue).toBe(130);
    expect(clock.fireDue(120)).toBe(false);
    expect(clock.now()).toBe(100);
    expect(clock.fireDue(130)).toBe(true);
    expect(fired).toEqual([2]);
  });

  it('treats negative and NaN delays as 0 and refuses to jump past a due timer', () => {
    const clock = new VirtualClock();
    clock.setTimer(-5, () => undefined);
    clock.setTimer(Number.NaN, () => undefined);
    expect(clock.nextDue).toBe(0);
    expect(() => clock.jumpTo(10)).toThrow(RangeError);
    clock.fireDue();
    clock.jumpTo(10);
    expect(clock.now()).toBe(10);
  });

  it('keeps firing the batch when a callback throws, then rethrows the first error', () => {
    const clock = new VirtualClock();
    const fired: number[] = [];
    clock.setTimer(5, () => {
      throw new Error('first');
    });
    clock.setTimer(5, () => fired.push(2));
    expect(() => clock.fireDue()).toThrow('first');
    expect(fired).toEqual([2]);
  });
});
