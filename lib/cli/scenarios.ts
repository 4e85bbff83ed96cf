import { Dependency } from '../testing/simulation/dependency.js';
import { Load } from '../testing/simulation/load.js';
import type { DependencyModel } from './dependency-spec.js';

/** The scenarios `nresilience simulate --scenario` knows. */
export const SCENARIOS = ['brownout', 'outage', 'failing'] as const;

/** A scenario name. */
export type ScenarioName = (typeof SCENARIOS)[number];

/** Calls per second of every scenario unless `--rate` says otherwise. */
export const DEFAULT_RATE = 500;

/** Workers of the modelled dependency at {@link DEFAULT_RATE}; scaled with the rate. */
const WORKERS_AT_DEFAULT_RATE = 100;

/**
 * The dependency and load of a scenario. All share one healthy dependency: log-normal service time
 * p50 20 ms, p99 200 ms, 100 workers per 500 calls/s of load (scaled with `rate`, at least 1), a
 * 150 ms server-side timeout, unbounded queue.
 * - `brownout` (the seed scenario): 8× slower from 0:30 for one minute.
 * - `outage`: every request fails from 0:30 for 30 s.
 * - `failing`: half of all requests fail for the whole run.
 * Faults that would start after the end of a short run are moved to start at 10 % of it and last at
 * most a fifth of it, so every duration shows the fault. `model` (`--dependency`) replaces any of
 * the healthy dependency's numbers, and its `failures` apply for the whole run on top of the fault.
 * @param name the scenario
 * @param duration the run's duration in ms (> 0)
 * @param rate calls per second (> 0)
 * @param model the dependency's own numbers (default: the healthy dependency above)
 */
export function scenario(
  name: ScenarioName,
  duration: number,
  rate: number,
  model: DependencyModel = {},
): { dependency: Dependency; load: Load } {
  const concurrency =
    model.workers ?? Math.max(1, Math.round((WORKERS_AT_DEFAULT_RATE * rate) / DEFAULT_RATE));
  const capacity = {
    concurrency,
    timeout: model.timeout ?? 150,
    ...(model.queue === undefined ? {} : { queue: model.queue }),
  };
  const base = Dependency.healthy({
    p50: model.p50 ?? 20,
    p99: model.p99 ?? 10 * (model.p50 ?? 20),
    capacity,
  });
  const healthy = model.failures === undefined ? base : base.failing(model.failures);
  const load = Load.constant({ perSecond: rate });
  const fits = duration >= 120_000;
  const after = fits ? 30_000 : duration / 10;
  switch (name) {
    case 'brownout':
      return {
        dependency: healthy.brownout({ after, slower: 8, lasting: fits ? 60_000 : duration / 5 }),
        load,
      };
    case 'outage':
      return {
        dependency: healthy.outage({ after, lasting: fits ? 30_000 : duration / 5, errorRate: 1 }),
        load,
      };
    case 'failing':
      return { dependency: healthy.failing(0.5), load };
  }
}
