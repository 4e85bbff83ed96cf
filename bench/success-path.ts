/**
 * Success-path cost of protecting a trivial async call, against a raw awaited call and against peers
 * measured in the same run (issue 2, DESIGN §10). Run on demand: `npm run bench`. Not part of `npm test`.
 *
 * Reports both harnesses of `harness.ts` (sequential interleaved rounds, batched tinybench). Peers:
 * cockatiel 3.2.1 (retry; retry+breaker+30 s timeout) and opossum 9 (with and without its 30 s timeout).
 * Floors (`floors.ts`): each preset's success written by hand with the library's primitives and no
 * executor; the `x floor` column is each preset against its own floor, the executor's own overhead.
 */
import {
  ConsecutiveBreaker,
  TimeoutStrategy,
  circuitBreaker,
  handleAll,
  retry,
  timeout,
  wrap,
} from 'cockatiel';
import CircuitBreaker from 'opossum';
import { breakerOnly, featuresOff, work } from './allocation-tasks.js';
import { breakerFloor, defaultFloor, httpFloor } from './floors.js';
import { measure } from './harness.js';
import { Resilience } from '@nresilience/nestjs/core';

const cockatielRetry = retry(handleAll, { maxAttempts: 2 });
const cockatielFull = wrap(
  retry(handleAll, { maxAttempts: 2 }),
  circuitBreaker(handleAll, { halfOpenAfter: 15_000, breaker: new ConsecutiveBreaker(5) }),
  timeout(30_000, TimeoutStrategy.Cooperative),
);
const opossumTimeout = new CircuitBreaker(work, { timeout: 30_000 });
const opossumPlain = new CircuitBreaker(work, { timeout: false });

const defaults = Resilience.default;
const http = Resilience.http;

// Each floor on a policy instance of its own (its own budget, breaker and measurements).
const floorDefault = defaultFloor(Resilience.default.with({}));
const floorBreaker = breakerFloor(breakerOnly.with({}));
const floorHttp = httpFloor(Resilience.http.with({}));

// Each preset's row names its floor's row (the `x floor` column; every feature off has nothing to do
// but the raw call); the floors come last.
const FLOOR_OF = [undefined, 0, 9, 10, 11];
await measure(
  'Success path',
  [
    ['raw await', () => work()],
    ['nresilience: every feature off', () => featuresOff.run(work)],
    ['nresilience: Resilience.default (retry + budget)', () => defaults.run(work)],
    ['nresilience: breaker only (1 attempt, Breaker.default)', () => breakerOnly.run(work)],
    ['nresilience: Resilience.http (+ breaker + 30 s deadline)', () => http.run(work)],
    ['cockatiel 3.2.1: retry', () => cockatielRetry.execute(work)],
    ['cockatiel 3.2.1: retry + breaker + timeout(30 s)', () => cockatielFull.execute(work)],
    ['opossum 9: breaker, no timeout', () => opossumPlain.fire()],
    ['opossum 9: breaker + timeout(30 s)', () => opossumTimeout.fire()],
    ['floor of Resilience.default: budget count + work + verdict + deposit', floorDefault],
    ['floor of breaker only: 2 clock reads + admission + work + verdict + record', floorBreaker],
    ['floor of Resilience.http: + budget, ceiling, 30 s timer raced, measured record', floorHttp],
  ],
  { index: FLOOR_OF, label: 'floor' },
);

opossumTimeout.shutdown();
opossumPlain.shutdown();
