import { SeededRandom } from '../seeded-random.js';

// What the simulator's drivers (one policy, a chain) share. @internal

/** Fixed, distinct streams derived from a run's seed (policy jitter, dependency, arrivals). @internal */
export function stream(seed: number, index: number): SeededRandom {
  return new SeededRandom(
    (Math.imul(seed ^ Math.imul(index, 0x9e37_79b9), 0x85eb_ca6b) ^ index) >>> 0,
  );
}

/** Microtask turns without activity after which a driver takes the queue as settled. */
const QUIET_TURNS = 8;

/**
 * Runs microtask turns until {@link QUIET_TURNS} pass in a row in which `activity()` (timers set or
 * cleared, requests, calls settling, events) did not change. @internal
 */
export async function settleMicrotasks(activity: () => number): Promise<void> {
  let seen = activity();
  for (let quiet = 0; quiet < QUIET_TURNS;) {
    await undefined;
    const now = activity();
    if (now === seen) quiet++;
    else {
      quiet = 0;
      seen = now;
    }
  }
}
