import { PolicyConfigError } from '../../core/index.js';
import { SeededRandom } from '../seeded-random.js';
import type { Dependency } from './dependency.js';
import type { Load } from './load.js';

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

/** What every run needs: the dependency, the load and the duration (ms). @internal */
export interface Scenario {
  readonly dependency: Dependency;
  readonly load: Load;
  readonly duration: number;
}

/**
 * The scenario a builder was given, checked complete before a run.
 * @throws PolicyConfigError naming the first of `dependency`, `load`, `duration` that is missing and
 *   the builder call that gives it
 * @internal
 */
export function requireScenario(builder: Partial<Scenario>): Scenario {
  const { dependency, load, duration } = builder;
  if (dependency === undefined)
    throw new PolicyConfigError(
      'dependency',
      undefined,
      'is required: call .against(Dependency.healthy({ p50, p99 }))',
    );
  if (load === undefined)
    throw new PolicyConfigError(
      'load',
      undefined,
      'is required: call .under(Load.constant({ perSecond }))',
    );
  if (duration === undefined)
    throw new PolicyConfigError('duration', undefined, 'is required: call .for(ms)');
  return { dependency, load, duration };
}
