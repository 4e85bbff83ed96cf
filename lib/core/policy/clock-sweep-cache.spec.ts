import { ClockSweepCache, DEFAULT_SWEEP_LIMIT } from './clock-sweep-cache.js';

describe('ClockSweepCache', () => {
  it('holds at most capacity entries; get marks, peek does not; new entries start unreferenced', () => {
    const cache = new ClockSweepCache<string, number>(2);
    expect([cache.set('a', 1), cache.set('b', 2)]).toEqual([undefined, undefined]);
    expect([cache.get('a'), cache.peek('b'), cache.get('zz'), cache.peek('zz')]).toEqual([
      1,
      2,
      undefined,
      undefined,
    ]);
    expect(cache.set('c', 3)).toEqual({ key: 'b', value: 2 }); // a had its bit: passed over
    expect(cache.set('d', 4)).toEqual({ key: 'a', value: 1 }); // a's bit was cleared by the previous sweep
    expect([cache.size, cache.keys()]).toEqual([2, ['c', 'd']]);
  });

  it('replacing a cached key keeps its slot and bit and evicts nothing', () => {
    const cache = new ClockSweepCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    expect(cache.set('a', 10)).toBeUndefined();
    expect(cache.set('c', 3)).toEqual({ key: 'b', value: 2 });
    expect(cache.peek('a')).toBe(10);
  });

  it('sweeps at most sweepLimit entries, then evicts the one under the hand', () => {
    const cache = new ClockSweepCache<string, number>(4, 2);
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ] as const)
      cache.set(k, v);
    for (const k of ['a', 'b', 'c', 'd']) cache.get(k);
    expect(cache.set('e', 5)).toEqual({ key: 'c', value: 3 }); // a, b cleared; c evicted though referenced
    expect(cache.set('f', 6)).toEqual({ key: 'a', value: 1 }); // d cleared (1 step), a already cleared
    expect(DEFAULT_SWEEP_LIMIT).toBe(64);
  });

  it('delete frees a slot reused without eviction; clear empties; forEach is capped and ordered', () => {
    const cache = new ClockSweepCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect([cache.delete('b'), cache.delete('b'), cache.has('b')]).toEqual([true, false, false]);
    expect(cache.set('d', 4)).toBeUndefined();
    const seen: string[] = [];
    cache.forEach(2, (v, k) => seen.push(`${k}=${v}`));
    expect(seen).toEqual(['a=1', 'c=3']);
    cache.clear();
    expect([cache.size, cache.keys()]).toEqual([0, []]);
    expect([cache.set('x', 1), cache.set('y', 2), cache.set('z', 3), cache.set('w', 4)]).toEqual([
      undefined,
      undefined,
      undefined,
      { key: 'x', value: 1 },
    ]);
  });
});
