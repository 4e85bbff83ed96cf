import { PolicyConfigError } from '../../core/index.js';
import { SeededRandom } from '../seeded-random.js';
import { Dependency } from './dependency.js';
import type { FaultWindow } from './dependency.js';
import { LogNormalLatency } from './latency.js';

/** Calls per second the matrix offers unless told otherwise (DESIGN §8.1). */
export const MATRIX_RATE = 500;

/** The modelled dependency's latency (ms) and server-side timeout, the CLI's own (`nresilience simulate`). */
const P50 = 20;
const P99 = 200;
const SERVER_TIMEOUT = 150;
/** Workers per {@link MATRIX_RATE} calls/s: the CLI's dependency, scaled with the rate. */
const WORKERS_AT_RATE = 100;

/** One scenario of the matrix: a dependency model, how long it runs, and when the dependency is impaired. */
export interface MatrixScenario {
  /** Short name, used by `--scenario`-style filters and in the table (`failing-30`, `outage-30s`). */
  readonly name: string;
  /** What happens, in a few words. */
  readonly description: string;
  /** Simulated ms of arrivals. */
  readonly duration: number;
  /**
   * The windows (ms) in which the dependency is impaired; "attempts during the fault" counts the
   * attempts sent in them. A steady impairment (`failing`, overload) covers the whole run; `healthy`
   * and `slow` have none that fails.
   */
  readonly faults: readonly FaultWindow[];
  /** True when the dependency still answers at least about half its requests throughout (the availability gate applies). */
  readonly servesHalf: boolean;
  /** The dependency model at `rate` calls/s (its workers scale with the rate). */
  dependency(rate: number): Dependency;
  /**
   * For an overload scenario: the successful requests per second the dependency can serve at best
   * at `rate` calls/s offered (every worker busy, no queue: workers ÷ mean service time × the share
   * of requests answered within the server-side timeout). `undefined` for the others.
   */
  capacity?(rate: number): number;
}

function workers(rate: number): number {
  return Math.max(1, Math.round((WORKERS_AT_RATE * rate) / MATRIX_RATE));
}

function modelled(rate: number, timeout = SERVER_TIMEOUT): Dependency {
  return Dependency.healthy({
    p50: P50,
    p99: P99,
    capacity: { concurrency: workers(rate), timeout },
  });
}

/**
 * Mean time (ms) one request holds a worker in the modelled dependency (service time truncated at the
 * server-side timeout) and the share answered within it, from 200 000 seeded draws (deterministic).
 */
function serviceStatistics(): { mean: number; answered: number } {
  const latency = new LogNormalLatency(P50, P99);
  const random = new SeededRandom(1).next;
  let sum = 0;
  let answered = 0;
  const draws = 200_000;
  for (let i = 0; i < draws; i++) {
    const service = Math.max(1, Math.ceil(latency.sample(random)));
    sum += Math.min(SERVER_TIMEOUT, service);
    if (service < SERVER_TIMEOUT) answered++;
  }
  return { mean: sum / draws, answered: answered / draws };
}

let service: { mean: number; answered: number } | undefined;

/** Workers that give the modelled dependency a capacity of `rate / overload` requests per second. */
function overloadedWorkers(rate: number, overload: number): number {
  service ??= serviceStatistics();
  return Math.max(1, Math.round(((rate / overload) * service.mean) / 1000));
}

/** Successful requests per second `workers` serve at best (every worker busy, nothing queued). */
function bestGoodput(workers: number): number {
  service ??= serviceStatistics();
  return ((workers * 1000) / service.mean) * service.answered;
}

function overloaded(
  name: string,
  overload: number,
  description: string,
  contention: number,
): MatrixScenario {
  const concurrency = (rate: number) => overloadedWorkers(rate, overload);
  return {
    name,
    description,
    duration: 2 * MINUTE,
    faults: whole(2 * MINUTE),
    servesHalf: true,
    dependency: (rate: number) =>
      Dependency.healthy({
        p50: P50,
        p99: P99,
        capacity: { concurrency: concurrency(rate), timeout: SERVER_TIMEOUT, contention },
      }),
    capacity: (rate: number) => bestGoodput(concurrency(rate)),
  };
}

const MINUTE = 60_000;
const whole = (duration: number): FaultWindow[] => [{ start: 0, end: duration }];

function failing(percent: number, duration: number): MatrixScenario {
  return {
    name: `failing-${percent}`,
    description: `${percent} % of requests fail, independently, the whole run`,
    duration,
    faults: whole(duration),
    servesHalf: percent <= 50,
    dependency: (rate) => modelled(rate).failing(percent / 100),
  };
}

/** Down 30 s, up 30 s, from 0:30 for four minutes. */
const FLAPS = [30_000, 90_000, 150_000, 210_000].map((start) => ({ start, end: start + 30_000 }));

/**
 * The scenario matrix (DESIGN §8.1), every scenario at {@link MATRIX_RATE} calls/s against the CLI's
 * modelled dependency (log-normal p50 20 ms / p99 200 ms, 100 workers per 500 calls/s, 150 ms
 * server-side timeout) unless stated:
 * - `healthy`: one minute, nothing wrong (the 150 ms timeout still fails about 2 % of requests);
 * - `failing-1` … `failing-70`: that share of requests fails independently for 10 minutes (1–40 %)
 *   or 2 minutes (50 %, 70 %);
 * - `brownout`: 8× slower from 0:30 for 60 s (2 min);
 * - `outage-30s`: every request fails from 0:30 for 30 s (2 min);
 * - `outage-5m`: every request fails from 0:30 for 5 min (5 min 45 s);
 * - `flapping`: down 30 s / up 30 s from 0:30 for 4 min (4 min 15 s);
 * - `overload`: offered load 1.5× the dependency's capacity (workers cut to fit; a queue of one
 *   request per worker, so failures come from load), 2 min;
 * - `overload-3x`: offered load 3× the dependency's capacity, with an unbounded queue and the 150 ms
 *   timeout counting queue time: queueing latency grows, requests time out (many after a worker
 *   began them: wasted work), 2 min;
 * - `queue-latency`: offered load 2× capacity, the dependency slowing with its own queue (a request
 *   starts `1 + queued / workers` times slower), so past saturation its throughput falls, 2 min;
 * - `slow`: 3× slower from 0:30 for 60 s with no server-side timeout, so nothing fails (2 min);
 * - `cold-start-dead`: every request fails from the first one (30 s);
 * - `latency-tail`: nothing fails (no server-side timeout), but 3 % of requests are 20× slower than
 *   a tight body (p50 20 ms, p99 60 ms): the tail hedging is for (1 min);
 * - `hanging`: 1 % of requests hang (no answer for half an hour; no server-side timeout), the rest
 *   as healthy: what a hung dependency costs while each hung request holds a caller (and a worker)
 *   until the caller's own bound gives up — the attempt ceiling's case (2 min).
 */
export const MATRIX_SCENARIOS: readonly MatrixScenario[] = Object.freeze([
  {
    name: 'healthy',
    description: 'nothing wrong',
    duration: MINUTE,
    faults: [],
    servesHalf: true,
    dependency: (rate: number) => modelled(rate),
  },
  failing(1, 10 * MINUTE),
  failing(10, 10 * MINUTE),
  failing(30, 10 * MINUTE),
  failing(40, 10 * MINUTE),
  failing(50, 2 * MINUTE),
  failing(70, 2 * MINUTE),
  {
    name: 'brownout',
    description: '8× slower from 0:30 for 60 s',
    duration: 2 * MINUTE,
    faults: [{ start: 30_000, end: 90_000 }],
    servesHalf: true,
    dependency: (rate: number) =>
      modelled(rate).brownout({ after: 30_000, slower: 8, lasting: MINUTE }),
  },
  {
    name: 'outage-30s',
    description: 'every request fails from 0:30 for 30 s',
    duration: 2 * MINUTE,
    faults: [{ start: 30_000, end: 60_000 }],
    servesHalf: false,
    dependency: (rate: number) => modelled(rate).outage({ after: 30_000, lasting: 30_000 }),
  },
  {
    name: 'outage-5m',
    description: 'every request fails from 0:30 for 5 min',
    duration: 345_000,
    faults: [{ start: 30_000, end: 330_000 }],
    servesHalf: false,
    dependency: (rate: number) => modelled(rate).outage({ after: 30_000, lasting: 5 * MINUTE }),
  },
  {
    name: 'flapping',
    description: 'down 30 s / up 30 s from 0:30 for 4 min',
    duration: 255_000,
    faults: FLAPS,
    servesHalf: false,
    dependency: (rate: number) =>
      FLAPS.reduce(
        (d, f) => d.outage({ after: f.start, lasting: f.end - f.start }),
        modelled(rate),
      ),
  },
  {
    name: 'overload',
    description: 'offered load 1.5× capacity, failures caused by load',
    duration: 2 * MINUTE,
    faults: whole(2 * MINUTE),
    servesHalf: true,
    dependency: (rate: number) => {
      const concurrency = overloadedWorkers(rate, 1.5);
      return Dependency.healthy({
        p50: P50,
        p99: P99,
        capacity: { concurrency, queue: concurrency, timeout: SERVER_TIMEOUT },
      });
    },
  },
  overloaded(
    'overload-3x',
    3,
    'offered load 3× capacity, an unbounded queue: queueing latency grows, requests time out in it and waste work',
    0,
  ),
  overloaded(
    'queue-latency',
    2,
    'offered load 2× capacity, service slowing with the queue (contention 1): past saturation throughput falls',
    1,
  ),
  {
    name: 'slow',
    description: '3× slower from 0:30 for 60 s, nothing fails',
    duration: 2 * MINUTE,
    faults: [],
    servesHalf: true,
    dependency: (rate: number) =>
      modelled(rate, Infinity).brownout({ after: 30_000, slower: 3, lasting: MINUTE }),
  },
  {
    name: 'cold-start-dead',
    description: 'every request fails from the first one',
    duration: 30_000,
    faults: whole(30_000),
    servesHalf: false,
    dependency: (rate: number) => modelled(rate).outage({ after: 0, lasting: 30_000 }),
  },
  {
    name: 'latency-tail',
    description: '3 % of requests 20× slower, nothing fails',
    duration: MINUTE,
    faults: [],
    servesHalf: true,
    dependency: (rate: number) =>
      Dependency.healthy({
        p50: P50,
        p99: 3 * P50,
        capacity: { concurrency: workers(rate), timeout: Infinity },
      }).tail({ share: 0.03, slower: 20 }),
  },
  {
    name: 'hanging',
    description: '1 % of requests hang (no answer for half an hour), nothing else fails',
    duration: 2 * MINUTE,
    faults: [],
    servesHalf: true,
    dependency: (rate: number) => modelled(rate, Infinity).tail({ share: 0.01, slower: 90_000 }),
  },
]);

/** The matrix scenario named `name`. @throws PolicyConfigError naming `scenario` for an unknown name. */
export function matrixScenario(name: string): MatrixScenario {
  const found = MATRIX_SCENARIOS.find((s) => s.name === name);
  if (found === undefined) {
    throw new PolicyConfigError(
      'scenario',
      name,
      `must be one of ${MATRIX_SCENARIOS.map((s) => s.name).join(', ')}`,
    );
  }
  return found;
}
