import { PolicyConfigError } from '../../core/index.js';
import { SeededRandom } from '../seeded-random.js';
import { Load } from './load.js';

function take(next: () => number, until: number): number[] {
  const times: number[] = [];
  for (let t = next(); t < until; t = next()) times.push(t);
  return times;
}

describe('Load', () => {
  it('spaces constant arrivals evenly, without drift', () => {
    const times = take(Load.constant({ perSecond: 3 }).schedule(Math.random), 10_000);
    expect(times).toHaveLength(30);
    expect(times.slice(0, 4)).toEqual([0, 1000 / 3, 2000 / 3, 1000]);
  });

  it('changes rate at each step', () => {
    const load = Load.steps([
      { at: 1000, perSecond: 2 },
      { at: 2000, perSecond: 0 },
      { at: 3000, perSecond: 4 },
    ]);
    expect(take(load.schedule(Math.random), 4000)).toEqual([1000, 1500, 3000, 3250, 3500, 3750]);
    expect(load.rateAt(500)).toBe(0);
    expect(load.rateAt(3100)).toBe(4);
    expect(load.toString()).toBe('2/s from 1s, 0/s from 2s, 4/s from 3s');
  });

  it('draws seeded Poisson arrivals: same seed, same times, about the right rate', () => {
    const load = Load.constant({ perSecond: 100, arrivals: 'poisson' });
    const a = take(load.schedule(new SeededRandom(9).next), 60_000);
    const b = take(load.schedule(new SeededRandom(9).next), 60_000);
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(5700);
    expect(a.length).toBeLessThan(6300);
  });

  it('refuses bad steps, naming the field', () => {
    expect(() => Load.steps([])).toThrow(PolicyConfigError);
    expect(() => Load.constant({ perSecond: -1 })).toThrow('steps[0].perSecond: -1 is invalid');
    expect(() =>
      Load.steps([
        { at: 10, perSecond: 1 },
        { at: 5, perSecond: 1 },
      ]),
    ).toThrow("steps[1].at: 5 is invalid: must be greater than the previous step's at (10)");
    expect(() => Load.constant({ perSecond: 1, arrivals: 'bursty' as never })).toThrow('arrivals');
    expect(() => Load.steps([{ at: -1, perSecond: 1 }])).toThrow(
      'steps[0].at: -1 is invalid: must be a finite duration in ms >= 0',
    );
  });
});
