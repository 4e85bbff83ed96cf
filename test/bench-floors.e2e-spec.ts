import { type Policy, ManualClock, Resilience } from '@nresilience/nestjs/core';
import { breakerOnly } from '../bench/allocation-tasks.js';
import { type FloorWork, breakerFloor, defaultFloor, httpFloor } from '../bench/floors.js';

/**
 * The success-path floors of `bench/floors.ts` do the work a success of their preset does, no less:
 * on a clock that moves 3 ms at every reading, 151 successful calls through the preset and 151
 * through its floor (each on a policy instance of its own) read the clock as many times and leave the
 * budget, the breaker and the attempt ceiling in the same state. A floor that skipped a clock
 * reading, an admission or a record would read differently (`bench/success-path.ts` divides each
 * preset's time by its floor's).
 */

/** Every reading of the clock moves it 3 ms (so every duration is a count of readings), counted. */
class SteppingClock extends ManualClock {
  reads = 0;

  override now(): number {
    this.reads++;
    this.current += 3;
    return this.current;
  }
}

const CALLS = 150;

/**
 * `value`'s state, field by field, its functions replaced by a mark: a callback (a breaker's
 * transition reporter) is a closure of each instance, equal in what it does.
 */
function state(value: unknown, seen = new Map<object, unknown>()): unknown {
  if (typeof value === 'function') return '[function]';
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  const copy: Record<string, unknown> = Array.isArray(value) ? ([] as never) : {};
  seen.set(value, copy);
  for (const [key, field] of Object.entries(value)) copy[key] = state(field, seen);
  return copy;
}

async function compare(
  preset: Policy,
  floorOf: (policy: Policy, work: FloorWork) => () => Promise<number>,
): Promise<{ ours: Policy; floor: Policy; reads: number; floorReads: number; at: number }> {
  const oursClock = new SteppingClock(1000);
  const floorClock = new SteppingClock(1000);
  const ours = preset.with({ clock: oursClock });
  const floor = preset.with({ clock: floorClock });
  const work = async () => 1;
  const floorCall = floorOf(floor, work);
  // The first call resolves the policy's budget, breaker and measurements (which read the clock once).
  await ours.run(work);
  await floorCall();
  oursClock.reads = floorClock.reads = 0;
  for (let i = 0; i < CALLS; i++) {
    expect(await ours.run(work)).toBe(1);
    expect(await floorCall()).toBe(1);
  }
  // The same state, field by field (the clocks too: they moved alike).
  expect(state(floor.bucket())).toEqual(state(ours.bucket()));
  expect(state(floor.breaker())).toEqual(state(ours.breaker()));
  expect(state(floor.measurements())).toEqual(state(ours.measurements()));
  const reads = oursClock.reads;
  const floorReads = floorClock.reads;
  expect(floorClock.now()).toBe(oursClock.now());
  return { ours, floor, reads, floorReads, at: oursClock.now() };
}

describe('bench floors (bench/floors.ts)', () => {
  it('Resilience.default: no clock reading, the same budget', async () => {
    const { ours, floor, reads, floorReads } = await compare(Resilience.default, defaultFloor);
    expect(reads).toBe(0);
    expect(floorReads).toBe(0);
    expect(String(floor.explain())).toBe(String(ours.explain()));
  });

  it('breaker only: two readings per call, the same breaker', async () => {
    const { ours, floor, reads, floorReads } = await compare(breakerOnly, breakerFloor);
    expect(reads).toBe(2 * CALLS);
    expect(floorReads).toBe(2 * CALLS);
    expect(String(floor.explain())).toBe(String(ours.explain()));
    expect(String(ours.explain())).toContain(`0 of ${CALLS + 1} attempts failed`);
  });

  it('Resilience.http: two readings per call, the same budget, breaker and ceiling', async () => {
    const { ours, floor, reads, floorReads, at } = await compare(Resilience.http, httpFloor);
    expect(reads).toBe(2 * CALLS);
    expect(floorReads).toBe(2 * CALLS);
    expect(String(floor.explain())).toBe(String(ours.explain()));
    // The ceiling armed from the same successes, at the same value.
    const settings = { multiple: 3, quantile: 0.95 };
    const ceiling = ours.measurements()!.ceiling(at, settings.multiple, settings.quantile);
    expect(ceiling).toBeGreaterThan(0);
    expect(floor.measurements()!.ceiling(at, settings.multiple, settings.quantile)).toBe(ceiling);
  });
});
