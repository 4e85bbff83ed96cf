import { TimerHeap } from './timer-heap.js';

describe('TimerHeap', () => {
  it('takes timers by due time, ties in the order they were set, and removes any entry', () => {
    const heap = new TimerHeap();
    const order: string[] = [];
    const add = (due: number, name: string) => heap.add(due, () => order.push(name));
    add(30, 'c');
    const b = add(20, 'b');
    add(10, 'a1');
    add(10, 'a2');
    add(40, 'd');
    expect(heap.remove(b)).toBe(true);
    expect(heap.remove(b)).toBe(false);
    expect(heap.takeDue(5)).toBeUndefined();
    for (let entry = heap.takeDue(35); entry !== undefined; entry = heap.takeDue(35))
      entry.callback();
    expect(order).toEqual(['a1', 'a2', 'c']);
    expect([heap.size, heap.peek()!.due]).toEqual([1, 40]);
  });

  it('keeps order under many random inserts and removals', () => {
    const heap = new TimerHeap();
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const entries = Array.from({ length: 500 }, () =>
      heap.add(Math.floor(next() * 1000), () => undefined),
    );
    for (const entry of entries.filter((_, i) => i % 3 === 0)) heap.remove(entry);
    const dues: number[] = [];
    for (let entry = heap.takeDue(Infinity); entry !== undefined; entry = heap.takeDue(Infinity))
      dues.push(entry.due);
    expect(dues).toHaveLength(333);
    expect(dues).toEqual([...dues].sort((x, y) => x - y));
  });
});
