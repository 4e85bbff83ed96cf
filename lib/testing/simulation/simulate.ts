import {
  type AttemptContext,
  type CallEvent,
  type CallResult,
  type Policy,
  PolicyConfigError,
  RetryBudget,
  type RetryBudgetOptions,
  type StopReason,
} from '../../core/index.js';
import {
  BOUND_RULE,
  checkValue,
  given,
  POSITIVE_SPAN_RULE,
  SPAN_RULE,
} from '../../core/internal.js';
import { SEED_RULE } from '../seeded-random.js';
import { AdaptiveThrottle, THROTTLE_REFUSAL } from './adaptive-throttle.js';
import { AwsRetry } from './aws-retry.js';
import type { Dependency } from './dependency.js';
import type { Load } from './load.js';
import { BREAKER_STATES, SimulationReport } from './report.js';
import { type ChainBuilder, chainOf } from './chain.js';

const [CLOSED, HALF_OPEN, OPEN] = (['closed', 'halfOpen', 'open'] as const).map((state) =>
  BREAKER_STATES.indexOf(state),
);
import { VirtualClock } from './virtual-clock.js';
import { requireScenario, settleMicrotasks, stream } from './run-support.js';

/** Options of {@link SimulationBuilder.run}. */
export interface SimulationRunOptions {
  /**
   * Told the simulated time (ms) and the run's duration every `progressEvery` simulated ms (from the
   * driver, synchronously: keep it cheap).
   */
  readonly onProgress?: (simulatedMs: number, durationMs: number) => void;
  /** Simulated ms between progress reports, > 0. Default 10 000. */
  readonly progressEvery?: number;
  /**
   * Simulated ms the driver keeps following calls still in flight after arrivals stop, >= 0;
   * calls unsettled then count as failed and `unfinished`. Default 120 000.
   */
  readonly drainLimit?: number;
  /**
   * How the driver lets promise continuations settle between instants: `'microtasks'` (default) runs
   * microtask turns until 8 in a row see no activity; `'macrotask'` waits one macrotask turn, which
   * is exact whatever the depth of a promise chain, and slower. Both give the same report for the
   * executor as it is (a spec checks it).
   */
  readonly settle?: 'microtasks' | 'macrotask';
}

/**
 * A simulation being described (immutable; each step returns a new builder). Start with
 * {@link Simulate.policy}.
 */
export class SimulationBuilder {
  /** @internal use {@link Simulate.policy}. */
  constructor(
    /** The policy under test (re-created per run with the run's clock and random). */
    readonly policy: Policy,
    /** The modelled dependency, once given. */
    readonly dependency: Dependency | undefined,
    /** The load, once given. */
    readonly load: Load | undefined,
    /** Simulated duration in ms, once given. */
    readonly duration: number | undefined,
    /** A reference client-side throttle or retry strategy in front of the dependency, if given. */
    readonly throttle: AdaptiveThrottle | AwsRetry | undefined = undefined,
  ) {}

  /** The same simulation against `dependency`. */
  against(dependency: Dependency): SimulationBuilder {
    return new SimulationBuilder(this.policy, dependency, this.load, this.duration, this.throttle);
  }

  /** The same simulation under `load`. */
  under(load: Load): SimulationBuilder {
    return new SimulationBuilder(this.policy, this.dependency, load, this.duration, this.throttle);
  }

  /**
   * The same simulation with `throttle` deciding every attempt before it is sent (the reference rows
   * of the scenario matrix; DESIGN §3.6): an {@link AdaptiveThrottle} refuses attempts, an
   * {@link AwsRetry} refuses retries its quota cannot fund and (adaptive mode) holds attempts for a
   * send token. A refused attempt never reaches the dependency and fails with a `RateLimitedError`.
   * @throws PolicyConfigError naming `throttle` unless it is an {@link AdaptiveThrottle} or an {@link AwsRetry}.
   */
  throttledBy(throttle: AdaptiveThrottle | AwsRetry): SimulationBuilder {
    if (!(throttle instanceof AdaptiveThrottle) && !(throttle instanceof AwsRetry)) {
      throw new PolicyConfigError(
        'throttle',
        throttle,
        'must be an AdaptiveThrottle (AdaptiveThrottle.sre()) or an AwsRetry (AwsRetry.standard, AwsRetry.adaptive)',
      );
    }
    return new SimulationBuilder(this.policy, this.dependency, this.load, this.duration, throttle);
  }

  /**
   * The same simulation lasting `ms` simulated milliseconds of arrivals.
   * @throws PolicyConfigError naming `duration` unless it is a finite duration in ms > 0.
   */
  for(ms: number): SimulationBuilder {
    return new SimulationBuilder(
      this.policy,
      this.dependency,
      this.load,
      checkValue(BOUND_RULE, 'duration', ms),
      this.throttle,
    );
  }

  /**
   * Runs the simulation: the real executor, budget and breaker of `policy.with({ clock, random })` on a
   * {@link VirtualClock}, one driver, no real sleeps. The same seed gives the same report, byte for byte.
   *
   * Driver: arrivals come from the load; each starts `policy.tryRun(work)`, where `work` sends one
   * request to the live dependency model and waits for it on the virtual clock. The driver fires
   * every timer due at the next instant, then lets promise continuations settle (one macrotask turn)
   * before jumping again. After the last arrival it follows calls in flight up to `drainLimit`.
   *
   * Budgets: an automatic budget gets a fresh bucket per run (the re-created policy is a new
   * instance); `RetryBudget.of` and `RetryBudget.shared` are replaced by `RetryBudget.tokenBucket` (the
   * same static bucket per run) with the same parameters, so no bucket outlives a run or leaks across runs.
   *
   * @param seed an integer in [0, 2^32 - 1]; seeds the policy's jitter, the dependency and the arrivals
   * @throws PolicyConfigError when the seed is invalid, the dependency, load or duration is missing,
   *   the policy's budget is `RetryBudget.using(bucket)` or its breaker `Breaker.using(instance)` (state
   *   bound to another clock), or an
   *   option of `options` is out of range.
   */
  async run(seed: number, options: SimulationRunOptions = {}): Promise<SimulationReport> {
    checkValue(SEED_RULE, 'seed', seed);
    const { dependency, load, duration } = requireScenario(this);
    const progressEvery = checkValue(
      POSITIVE_SPAN_RULE,
      'progressEvery',
      given(options.progressEvery, 10_000),
    );
    const drainLimit = checkValue(SPAN_RULE, 'drainLimit', given(options.drainLimit, 120_000));
    const onProgress = options.onProgress;

    const clock = new VirtualClock();
    const budget = this.policy.options.budget;
    if (budget.kind === 'using') {
      throw new PolicyConfigError(
        'budget',
        'RetryBudget.using(bucket)',
        'cannot be simulated: the bucket belongs to another clock; use RetryBudget.automatic or RetryBudget.of(options)',
      );
    }
    if (this.policy.options.breaker?.kind === 'using') {
      throw new PolicyConfigError(
        'breaker',
        'Breaker.using(instance)',
        'cannot be simulated: the breaker belongs to another clock; use Breaker.default or Breaker.with(settings)',
      );
    }
    if (this.policy.options.limit?.kind === 'using') {
      throw new PolicyConfigError(
        'limit',
        'Limit.using(instance)',
        'cannot be simulated: the limiter belongs to another clock; use Limit.concurrency(n) or Limit.adaptive(options)',
      );
    }
    const runBudget =
      budget.kind === 'of' || budget.kind === 'shared'
        ? RetryBudget.tokenBucket(budget.options as RetryBudgetOptions)
        : budget;

    const secondsCount = Math.ceil(duration / 1000);
    const perCalls = new Int32Array(secondsCount);
    const perRequests = new Int32Array(secondsCount);
    const perSucceeded = new Int32Array(secondsCount);
    const perBreaker = new Int8Array(secondsCount);
    const perUtilization = new Float64Array(secondsCount);

    let activity = 0;
    let breakerState = 0;
    let breakerOpens = 0;
    const listener = (event: CallEvent): void => {
      activity++;
      const kind = event.kind;
      if (kind === 'breakerOpened') {
        breakerOpens++;
        breakerState = OPEN;
      } else if (kind === 'breakerHalfOpened') breakerState = HALF_OPEN;
      else if (kind === 'breakerClosed') breakerState = CLOSED;
      else return;
      const second = Math.floor(clock.now() / 1000);
      if (second < secondsCount && perBreaker[second]! < breakerState)
        perBreaker[second] = breakerState;
    };
    const policy = this.policy
      .with({ clock, random: stream(seed, 1).next, budget: runBudget })
      .withListener(listener);
    const o = policy.options;
    const hasBreaker = o.breaker !== undefined;
    // Nothing can abort an attempt without a timeout or a deadline; reading ctx.signal would build an
    // AbortController per attempt for nothing.
    // A hedge aborts its losers.
    const readsSignal =
      o.attemptTimeout !== undefined || o.deadline !== undefined || o.hedge !== undefined;

    const live = dependency.start(clock, stream(seed, 2).next);
    const send = (signal: AbortSignal | undefined): Promise<void> => {
      activity++;
      const second = Math.floor(clock.now() / 1000);
      if (second < secondsCount) perRequests[second]!++;
      return live.request(signal);
    };
    const gate =
      this.throttle instanceof AdaptiveThrottle
        ? this.throttle.start(stream(seed, 4).next)
        : undefined;
    const accepted = (): void => gate!.accept(clock.now());
    const sendThrough = (signal: AbortSignal | undefined): Promise<void> => {
      if (gate === undefined) return send(signal);
      activity++;
      if (!gate.admit(clock.now())) return Promise.reject(THROTTLE_REFUSAL);
      return send(signal).then(accepted);
    };
    // A request never stays inside the dependency longer than its server-side timeout, so an attempt
    // whose bound is longer cannot be aborted while it waits: its signal is not read (no controller,
    // no listener), with the same outcome. Equal bounds still read it: the policy's timer fires first.
    const longest = dependency.capacity.timeout;
    const work = readsSignal
      ? (context: AttemptContext): Promise<void> =>
          sendThrough(context.bound > longest && o.hedge === undefined ? undefined : context.signal)
      : (): Promise<void> => sendThrough(undefined);
    // The AWS references keep state per call (what its retry cost, whether its attempt timed out),
    // so each call gets its own work; an attempt may wait for a send token, so its signal is read.
    const aws = this.throttle instanceof AwsRetry ? this.throttle.start(clock) : undefined;
    const awsWork = (): ((context: AttemptContext) => Promise<void>) => {
      const through = aws!.call();
      return (context) => {
        activity++;
        return through(context.attempt, readsSignal ? context.signal : undefined, send);
      };
    };

    let calls = 0;
    let settled = 0;
    let succeeded = 0;
    let durations = new Float64Array(1024);
    let admitted = new Float64Array(1024);
    let admittedCount = 0;
    const reasons: Partial<Record<StopReason, number>> = {};

    const nextArrival = load.schedule(stream(seed, 3).next);
    const arrive = (): void => {
      const second = Math.floor(clock.now() / 1000);
      perCalls[second]!++;
      calls++;
      void policy.tryRun(aws === undefined ? work : awsWork()).then((result: CallResult<void>) => {
        activity++;
        if (settled === durations.length) {
          const grown = new Float64Array(durations.length * 2);
          grown.set(durations);
          durations = grown;
        }
        durations[settled++] = result.duration;
        if (result.attempts.length > 0) {
          if (admittedCount === admitted.length) {
            const grown = new Float64Array(admitted.length * 2);
            grown.set(admitted);
            admitted = grown;
          }
          admitted[admittedCount++] = result.duration;
        }
        reasons[result.reason] = (reasons[result.reason] ?? 0) + 1;
        if (result.ok) {
          succeeded++;
          perSucceeded[second]!++;
        }
      });
      scheduleArrival();
    };
    const scheduleArrival = (): void => {
      const at = nextArrival();
      if (at < duration) clock.setTimer(at - clock.now(), arrive);
    };
    scheduleArrival();

    // Second ticks: sample the budget and carry the breaker state into the next second.
    let bucketOf = (): number => 0;
    const hasBudget = runBudget.kind !== 'none';
    if (hasBudget) bucketOf = () => policy.bucket()?.utilization ?? 0;
    const progressSeconds = Math.max(1, Math.round(progressEvery / 1000));
    const tick = (second: number): void => {
      // `second` just ended.
      perUtilization[second] = bucketOf();
      const next = second + 1;
      if (next < secondsCount) {
        perBreaker[next] = breakerState;
        clock.setTimer((next + 1) * 1000 - clock.now(), () => tick(next));
      }
      if (onProgress !== undefined && next % progressSeconds === 0)
        onProgress(Math.min(next * 1000, duration), duration);
    };
    clock.setTimer(Math.min(1000, duration), () => tick(0));

    // Settling between instants: either one macrotask turn (exact), or microtask turns until
    // QUIET_TURNS pass in a row with no activity (no timer set or cleared, no request, no call
    // settling, no event). The executor's longest silent chain of continuations is 2–3 turns; the
    // spec compares both modes byte for byte to keep that margin honest.
    const exact = options.settle === 'macrotask';
    const changes = (): number => clock.changes + activity;
    const stopAt = duration + drainLimit;
    for (;;) {
      if (clock.now() >= duration && settled === calls) break;
      if (!clock.fireDue(stopAt)) break;
      if (exact) await macrotask();
      else await settleMicrotasks(changes);
    }
    if (onProgress !== undefined && secondsCount % progressSeconds !== 0)
      onProgress(duration, duration);

    return new SimulationReport({
      seed,
      duration,
      policy: policy.name,
      dependency: dependency.toString(),
      load: load.toString(),
      calls,
      succeeded,
      unfinished: calls - settled,
      reasons,
      breakerOpens,
      faultWindow: dependency.faultWindow,
      counters: {
        requests: live.requests,
        overloaded: live.overloaded,
        timedOut: live.timedOut,
        failed: live.failed,
        abandoned: live.abandoned,
      },
      durations: durations.slice(0, settled),
      admittedDurations: admitted.slice(0, admittedCount),
      seconds: {
        calls: perCalls,
        requests: perRequests,
        succeeded: perSucceeded,
        breaker: perBreaker,
        utilization: perUtilization,
      },
      hasBreaker,
      hasBudget,
    });
  }
}

/** Lets every pending promise continuation run: one macrotask turn drains the microtask queue (exact, slower). */
function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Prices a policy before it ships (DESIGN §8): runs the real executor, retry budget and breaker
 * against a modelled dependency on a virtual clock and reports what the dependency felt.
 *
 * ```ts
 * const report = await Simulate.policy(Resilience.default)
 *   .against(Dependency.healthy({ p50: 20, p99: 200, capacity: { concurrency: 100, timeout: 1000 } })
 *     .brownout({ after: 30_000, slower: 8, lasting: 60_000 }))
 *   .under(Load.constant({ perSecond: 500 }))
 *   .for(300_000)
 *   .run(42);
 * expect(report.loadMultiplier).toBeLessThanOrEqual(1.2);
 * ```
 */
export const Simulate = {
  /**
   * Starts describing a simulation of `policy`.
   * @throws PolicyConfigError naming `policy` unless it is a Policy (has `with` and `tryRun`).
   */
  policy(policy: Policy): SimulationBuilder {
    if (
      policy === null ||
      typeof policy !== 'object' ||
      typeof policy.with !== 'function' ||
      typeof policy.tryRun !== 'function'
    ) {
      throw new PolicyConfigError(
        'policy',
        policy,
        'must be a Policy (Resilience.default.with({ ... }))',
      );
    }
    return new SimulationBuilder(policy, undefined, undefined, undefined);
  },

  /**
   * Starts describing a chain of services (`hops`, frontend first): each hop's dependency is the next
   * hop, the last one's the modelled dependency — three hops of three attempts against a dead
   * database send it 27 requests per call without a budget (see `ChainBuilder.run`).
   *
   * ```ts
   * const report = await Simulate.chain([Resilience.default, Resilience.default, Resilience.default])
   *   .against(Dependency.healthy({ p50: 20, p99: 200 }).failing(1))
   *   .under(Load.constant({ perSecond: 100 }))
   *   .for(20_000)
   *   .run(1);
   * report.bottomAmplification; // about 1.1 with the per-hop retry budgets
   * ```
   * @throws PolicyConfigError naming `hops` unless it is an array of 1 to 8 Policies.
   */
  chain(hops: readonly Policy[]): ChainBuilder {
    return chainOf(hops);
  },
} as const;
