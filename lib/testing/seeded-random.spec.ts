import { PolicyConfigError } from '../core/index.js';
import { SeededRandom } from './seeded-random.js';

describe('SeededRandom', () => {
  it('produces pinned values for a seed (the same on every platform)', () => {
    const random = new SeededRandom(1);
    expect([random.next(), random.next(), random.next()]).toEqual([
      0.5516269059277428, 0.9171766928384073, 0.8382188006730045,
    ]);
  });

  it('validates the seed', () => {
    expect(() => new SeededRandom(-1)).toThrow(
      'seed: -1 is invalid: must be an integer in [0, 4294967295]',
    );
    expect(() => new SeededRandom(1.5)).toThrow(PolicyConfigError);
    expect(() => new SeededRandom(2 ** 32)).toThrow(PolicyConfigError);
  });
});

describe('SeededRandom as a policy random source', () => {
  it('stays in [0, 1) and is a detached, bound function', () => {
    const { next } = new SeededRandom(123);
    for (let i = 0; i < 10_000; i++) {
      const u = next();
      expect(u >= 0 && u < 1).toBe(true);
    }
  });

  it('nearby seeds do not start alike', () => {
    const firsts = [0, 1, 2, 3, 4].map((seed) => new SeededRandom(seed).next());
    expect(new Set(firsts.map((u) => u.toFixed(2))).size).toBe(5);
  });
});
