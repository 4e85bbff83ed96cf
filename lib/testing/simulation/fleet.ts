import {
  type CallEvent,
  Classifier,
  Limit,
  type Policy,
  PolicyConfigError,
  type RateLimiter,
  RetryBudget,
  type RetryBudgetOptions,
} from '../../core/index.js';
import { reserveLease } from '../../core/internal.js';
import { MemoryRateStore } from '../memory-rate-store.js';
import { Dependency } from './dependency.js';
import { Load } from './load.js';
import { settleMicrotasks, stream } from './run-support.js';
import { VirtualClock } from './virtual-clock.js';

/**
 * How the processes of a simulated fleet limit their calls to the provider: `shared`, one
 * `Limit.rate` of the provider's limit shared through a store (leases); `perProcess`, each process
 * its own `Limit.rate` of `limit / processes`; `none`, no limit at all.
 */
export type FleetLimitMode = 'shared' | 'perProcess' | 'none';

/** A window in which the fleet's shared store fails (ms from the start of the run). */
export interface StoreOutage {
  /** When the store goes down, ms >= 0. */
  readonly after: number;
  /** How long it stays down, ms > 0. */
  readonly lasting: number;
  /** Whether it comes back empty (a Redis restarted without persistence): every bucket full again. */
  readonly empty: boolean;
}

/** One fleet to simulate: the provider's limit, each process's traffic and how the fleet limits itself. */
export interface FleetSetup {
  /** The provider's limit: accepted requests per `per` ms, an integer >= 1 (also the fleet's limit). */
  readonly limit: number;
  /** The provider's window, ms (1000: a limit per second). */
  readonly per: number;
  /**
   * How the provider counts: a token bucket of `limit` per `per` ms holding at most `providerBurst`
   * (an integer >= 1); `undefined`: a strict sliding window (no `per` ms ever holds more than `limit`).
   */
  readonly providerBurst?: number;
  /** Calls per second each process is offered, one entry per process (uneven traffic). */
  readonly rates: readonly number[];
  /** How the fleet limits itself. */
  readonly mode: FleetLimitMode;
  /** The fleet's burst (`shared`); each process gets `burst / processes` (at least 1) in `perProcess`. */
  readonly burst: number;
  /** Tokens a process leases from the store at a time (`shared`). */
  readonly lease: number;
  /** The store's modelled round trip, ms >= 0. */
  readonly roundTrip: number;
  /** A store outage (`shared`), if any. */
  readonly outage?: StoreOutage;
  /** Simulated ms of arrivals. */
  readonly duration: number;
}

/**
 * The provider's answer above its limit: an HTTP 429 with `Retry-After: 1`, as `Classifier.http`
 * reads it (Throttled, retried after exactly 1000 ms).
 */
export class ProviderThrottledError extends Error {
  override readonly name = 'ProviderThrottledError';
  /** The HTTP status, 429. */
  readonly status = 429;
  /** The answer's headers: `retry-after` in whole seconds. */
  readonly headers: Readonly<Record<string, string>> = Object.freeze({ 'retry-after': '1' });
}

// One shared instance: building an Error captures a stack, which would dominate a long run.
const THROTTLED = new ProviderThrottledError('the provider answered 429: over its rate limit');

/** ms a 429 takes to come back: the provider refuses before doing any work. */
const THROTTLE_LATENCY = 5;

/**
 * The provider's own count: a sliding window of the last `limit` accepted requests, so no window of
 * `per` ms ever holds more than `limit` of them (the strictest reading of "N per second"). A request
 * arriving when the `limit`-th accepted request before it is less than `per` ms old is refused.
 */
class SlidingWindow {
  private readonly accepted: Float64Array;
  private next = 0;

  constructor(
    limit: number,
    private readonly per: number,
  ) {
    this.accepted = new Float64Array(limit).fill(-Infinity);
  }

  admit(now: number): boolean {
    if (now - this.accepted[this.next]! < this.per) return false;
    this.accepted[this.next] = now;
    this.next = (this.next + 1) % this.accepted.length;
    return true;
  }
}

/**
 * The provider's count as most APIs keep it ("N per second" as a token bucket: Stripe, AWS API
 * Gateway, Envoy): `limit` per `per` ms, `burst` at once — the core's shared-lease GCRA asked for one
 * token at a time, with no reservation ahead.
 */
class TokenBucketProvider {
  private tat = -Infinity;

  constructor(
    private readonly limit: number,
    private readonly per: number,
    private readonly burst: number,
  ) {}

  admit(now: number): boolean {
    const decision = reserveLease(this.tat, now, 1, this.limit, this.per, this.burst, 0);
    this.tat = decision.tat;
    return decision.granted === 1;
  }
}

/** What one fleet run measured (`runFleet`). Counts over the whole run; rates per second of arrivals. */
export interface FleetRun {
  /** Calls offered to the fleet. */
  readonly calls: number;
  /** Calls that succeeded. */
  readonly succeeded: number;
  /** Calls a process's own limit refused (Limited: the provider never saw them). */
  readonly limited: number;
  /** Requests the provider received (attempts, retries included). */
  readonly requests: number;
  /** Requests it accepted (under its limit). */
  readonly accepted: number;
  /** Requests it answered 429. */
  readonly throttled: number;
  /** Requests it received per second of the run. */
  readonly requestsPerSecond: readonly number[];
  /** Requests it accepted per second of the run. */
  readonly acceptedPerSecond: readonly number[];
  /** 429s per second of the run. */
  readonly throttledPerSecond: readonly number[];
  /** Store round trips of every process (`shared`), else 0. */
  readonly roundTrips: number;
  /** Tokens the processes' limiters granted (attempts let through). */
  readonly granted: number;
  /** `limiterDegraded` events (one per process per episode). */
  readonly degradedEpisodes: number;
  /** ms from the store's return until the last process shared again (`limiterRecovered`); `null` without an outage or when one never did. */
  readonly backIn: number | null;
}

/** The provider behind the limit: 20 ms median, 200 ms p99, unlimited workers (its limit is the rate). */
const PROVIDER = Dependency.healthy({ p50: 20, p99: 200 });

/**
 * Runs a fleet on one {@link VirtualClock}: `rates.length` processes, each the real executor of its own
 * instance of `base` (its own retry budget, breaker and rate limiter, `Classifier.http` when it
 * classifies by default), all calling one provider that accepts `limit` requests per `per` ms (a
 * token bucket of `providerBurst`, or a strict sliding window) and answers the rest 429 with
 * `Retry-After: 1`. In `shared` mode the processes share one
 * {@link MemoryRateStore} (the same lease arithmetic as the Redis store) with a modelled round trip
 * and, optionally, an outage. The same seed gives the same run.
 * @param seed an integer in [0, 2^32 - 1]
 */
export async function runFleet(base: Policy, setup: FleetSetup, seed: number): Promise<FleetRun> {
  const clock = new VirtualClock();
  const seconds = Math.ceil(setup.duration / 1000);
  const perRequests = new Array<number>(seconds).fill(0);
  const perAccepted = new Array<number>(seconds).fill(0);
  const perThrottled = new Array<number>(seconds).fill(0);
  const store = new MemoryRateStore(clock, { roundTrip: setup.roundTrip });
  const outage = setup.mode === 'shared' ? setup.outage : undefined;
  let storeBackAt: number | undefined;
  if (outage !== undefined) {
    clock.setTimer(outage.after, () => (store.mode = 'down'));
    clock.setTimer(outage.after + outage.lasting, () => {
      if (outage.empty) store.clear();
      store.mode = 'up';
      storeBackAt = clock.now();
    });
  }

  let activity = 0;
  let degradedEpisodes = 0;
  let lastRecovery = -Infinity;
  const listener = (event: CallEvent): void => {
    activity++;
    if (event.kind === 'limiterDegraded') degradedEpisodes++;
    else if (event.kind === 'limiterRecovered') lastRecovery = clock.now();
  };
  const policies = setup.rates.map((_, i) =>
    processPolicy(base, setup, store, clock, seed, i).withListener(listener),
  );

  const window =
    setup.providerBurst === undefined
      ? new SlidingWindow(setup.limit, setup.per)
      : new TokenBucketProvider(setup.limit, setup.per, setup.providerBurst);
  const live = PROVIDER.start(clock, stream(seed, 2).next);
  let requests = 0;
  let accepted = 0;
  let throttled = 0;
  const work = (): Promise<void> => {
    activity++;
    const now = clock.now();
    const second = Math.floor(now / 1000);
    const inRun = second < seconds;
    requests++;
    if (inRun) perRequests[second]!++;
    if (!window.admit(now)) {
      throttled++;
      if (inRun) perThrottled[second]!++;
      return new Promise((_resolve, reject) =>
        clock.setTimer(THROTTLE_LATENCY, () => reject(THROTTLED)),
      );
    }
    accepted++;
    if (inRun) perAccepted[second]!++;
    return live.request(undefined);
  };

  let calls = 0;
  let settled = 0;
  let succeeded = 0;
  let limited = 0;
  policies.forEach((policy, i) => {
    const next = Load.constant({ perSecond: setup.rates[i]!, arrivals: 'poisson' }).schedule(
      stream(seed, 100 + i).next,
    );
    const arrive = (): void => {
      calls++;
      void policy.tryRun(work).then((result) => {
        activity++;
        settled++;
        if (result.ok) succeeded++;
        else if (result.reason === 'limited') limited++;
      });
      schedule();
    };
    const schedule = (): void => {
      const at = next();
      if (at < setup.duration) clock.setTimer(at - clock.now(), arrive);
    };
    schedule();
  });

  const changes = (): number => clock.changes + activity;
  const stopAt = setup.duration + 60_000;
  for (;;) {
    if (clock.now() >= setup.duration && settled === calls) break;
    if (!clock.fireDue(stopAt)) break;
    await settleMicrotasks(changes);
  }

  const limiters = policies.map((p) => p.limiter() as RateLimiter | undefined);
  let roundTrips = 0;
  let granted = 0;
  for (const limiter of limiters) {
    const snapshot = limiter?.snapshot();
    granted += snapshot?.granted ?? 0;
    roundTrips += snapshot?.shared?.roundTrips ?? 0;
  }
  return {
    calls,
    succeeded,
    limited,
    requests,
    accepted,
    throttled,
    requestsPerSecond: perRequests,
    acceptedPerSecond: perAccepted,
    throttledPerSecond: perThrottled,
    roundTrips,
    granted,
    degradedEpisodes,
    backIn:
      storeBackAt === undefined || lastRecovery < storeBackAt ? null : lastRecovery - storeBackAt,
  };
}

/** Process `i`'s policy for one run: the run's clock, its own random stream and budget, and the row's limit. */
function processPolicy(
  base: Policy,
  setup: FleetSetup,
  store: MemoryRateStore,
  clock: VirtualClock,
  seed: number,
  i: number,
): Policy {
  const budget = base.options.budget;
  if (budget.kind === 'using')
    throw new PolicyConfigError(
      'budget',
      'RetryBudget.using(bucket)',
      'cannot be simulated: the bucket belongs to another clock; use RetryBudget.automatic or RetryBudget.of(options)',
    );
  const runBudget =
    budget.kind === 'of' || budget.kind === 'shared'
      ? RetryBudget.tokenBucket(budget.options as RetryBudgetOptions)
      : budget;
  const classifier =
    base.options.classifier === Classifier.default ? Classifier.http : base.options.classifier;
  const n = setup.rates.length;
  const limit =
    setup.mode === 'shared'
      ? Limit.rate({
          limit: setup.limit,
          per: setup.per,
          burst: setup.burst,
          lease: setup.lease,
          store,
          key: 'provider',
          expectedInstances: n,
        })
      : setup.mode === 'perProcess'
        ? // The same rate as limit / n per `per`, whatever n divides: limit per n × per.
          Limit.rate({
            limit: setup.limit,
            per: setup.per * n,
            burst: Math.max(1, Math.floor(setup.burst / n)),
          })
        : undefined;
  return base.with({
    name: base.name || 'provider',
    clock,
    random: stream(seed, 10 + i).next,
    budget: runBudget,
    classifier,
    limit,
  });
}
