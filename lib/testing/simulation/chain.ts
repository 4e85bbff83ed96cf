import {
  Ambient,
  type AmbientChanges,
  type AmbientState,
  type AttemptContext,
  AttemptTimeoutError,
  type CallEvent,
  CallRejectedError,
  Classifier,
  DeadlineExceededError,
  formatRetryAfter,
  type Policy,
  PolicyConfigError,
  type RejectionReason,
  RelayedRefusalError,
  RetryBudget,
  type RetryBudgetOptions,
} from '../../core/index.js';
import { BOUND_RULE, checkValue, given, SPAN_RULE } from '../../core/internal.js';
import { SEED_RULE } from '../seeded-random.js';
import type { Dependency } from './dependency.js';
import type { Load } from './load.js';
import { ChainReport, type NestedRetryMode } from './chain-report.js';
import { requireScenario, settleMicrotasks, stream } from './run-support.js';
import { VirtualClock } from './virtual-clock.js';

export type { NestedRetryMode } from './chain-report.js';

/** Options of {@link ChainBuilder.run}. */
export interface ChainRunOptions {
  /** What a hop does with a marked request. Default `'report'`. */
  readonly nested?: NestedRetryMode;
  /**
   * Simulated ms the driver keeps following calls still in flight after arrivals stop, >= 0; calls
   * unsettled then count as failed. Default 120 000.
   */
  readonly drainLimit?: number;
}

/**
 * A lower hop's failure as the hop above reads it off the wire: the HTTP answer the lower hop's
 * exception filter writes. A refusal (`CallRejectedError`) is a 503 with `Retry-After` and the
 * problem type `urn:nresilience:problem:call-rejected`; a deadline or a last attempt that timed out
 * is a 504; attempts spent on the dependency's own failures are a 502.
 */
export class HopAnswerError extends Error {
  override readonly name = 'HopAnswerError';
  /** The answer's response headers (`Retry-After`, `Content-Type`). */
  readonly headers: Headers;
  /**
   * @param status the HTTP status the lower hop answered
   * @param reason the problem's `reason` (`BudgetExhausted`, `DeadlineExceeded`, …), `undefined` for a plain 502
   * @param retryAfter the refusal's hint in ms, when it had one
   */
  constructor(
    readonly status: number,
    readonly reason: string | undefined,
    readonly retryAfter: number | undefined,
  ) {
    super(`the hop below answered ${status}${reason === undefined ? '' : ` (${reason})`}`);
    this.headers = new Headers(
      reason === undefined ? {} : { 'content-type': 'application/problem+json' },
    );
    if (retryAfter !== undefined) this.headers.set('retry-after', formatRetryAfter(retryAfter));
  }

  /** The answer a hop whose call rejected with `error` writes (see the class comment). */
  static of(error: unknown): HopAnswerError {
    if (error instanceof HopAnswerError) return new HopAnswerError(502, undefined, undefined);
    // A refusal of this hop's own guards, or one relayed from below (`RelayedRefusalError`): the same answer.
    if (error instanceof CallRejectedError)
      return new HopAnswerError(503, error.reason, error.retryAfter);
    if (error instanceof DeadlineExceededError)
      return new HopAnswerError(504, 'DeadlineExceeded', undefined);
    if (error instanceof AttemptTimeoutError)
      return new HopAnswerError(504, 'AttemptTimeout', undefined);
    return new HopAnswerError(502, undefined, undefined);
  }
}

/**
 * A chain of services being described (immutable; each step returns a new builder): the first hop is
 * the frontend the load calls, each hop's dependency is the next hop, and the last hop calls the
 * modelled dependency (the database). Start with {@link Simulate.chain}.
 */
export class ChainBuilder {
  /** @internal use {@link Simulate.chain}. */
  constructor(
    /** The policy of each hop, frontend first (each re-created per run with the run's clock and random). */
    readonly hops: readonly Policy[],
    /** The modelled dependency below the last hop, once given. */
    readonly dependency: Dependency | undefined = undefined,
    /** The load on the frontend, once given. */
    readonly load: Load | undefined = undefined,
    /** Simulated duration in ms, once given. */
    readonly duration: number | undefined = undefined,
  ) {}

  /** The same chain with `dependency` below its last hop. */
  against(dependency: Dependency): ChainBuilder {
    return new ChainBuilder(this.hops, dependency, this.load, this.duration);
  }

  /** The same chain with `load` on its frontend. */
  under(load: Load): ChainBuilder {
    return new ChainBuilder(this.hops, this.dependency, load, this.duration);
  }

  /**
   * The same chain lasting `ms` simulated milliseconds of arrivals.
   * @throws PolicyConfigError naming `duration` unless it is a finite duration in ms > 0.
   */
  for(ms: number): ChainBuilder {
    return new ChainBuilder(
      this.hops,
      this.dependency,
      this.load,
      checkValue(BOUND_RULE, 'duration', ms),
    );
  }

  /**
   * Runs the chain on a {@link VirtualClock}: every hop is the real executor of its policy (its own
   * retry budget and breaker, fresh per run), and an attempt of hop k is one request to hop k + 1,
   * as an HTTP hop sends it: the nested-retry marker on the first attempt of a call that may retry
   * (also a single-shot one: the hop above still retries), the remaining time (the attempt's bound,
   * at most the inbound caller's time left) for hops with `useAmbientDeadline`, and the attempt's
   * signal, so a hop that gives up cancels the work below. A lower hop's failure comes back as its
   * HTTP answer ({@link HopAnswerError}), and a refusal among them as the resilient fetch reads it: a
   * `RelayedRefusalError` with the refusal's reason and hint (Permanent: not retried, not breaker
   * evidence; the hop answers its caller with the same refusal). A hop whose classifier is
   * `Classifier.default` judges the rest with `Classifier.http`, as the resilient fetch does. The same
   * seed gives the same report.
   *
   * @param seed an integer in [0, 2^32 - 1]
   * @throws PolicyConfigError when the seed or an option is invalid, the dependency, load or duration
   *   is missing, or a hop's budget is `RetryBudget.using(bucket)` or breaker `Breaker.using(instance)`
   *   (state bound to another clock).
   */
  async run(seed: number, options: ChainRunOptions = {}): Promise<ChainReport> {
    checkValue(SEED_RULE, 'seed', seed);
    const { dependency, load, duration } = requireScenario(this);
    const nested = given(options.nested, 'report');
    if (nested !== 'report' && nested !== 'singleShot')
      throw new PolicyConfigError('nested', nested, "must be 'report' or 'singleShot'");
    const drainLimit = checkValue(SPAN_RULE, 'drainLimit', given(options.drainLimit, 120_000));

    const clock = new VirtualClock();
    const last = this.hops.length - 1;
    const seconds = Math.ceil(duration / 1000);
    const perCalls = new Int32Array(seconds);
    const perRequests = new Int32Array(seconds);
    const perSucceeded = new Int32Array(seconds);
    // received[k]: requests hop k got (k = 0 the frontend's calls), received[hops] the dependency's.
    const received = new Array<number>(this.hops.length + 1).fill(0);
    const nestedSeen = new Array<number>(this.hops.length).fill(0);
    let activity = 0;
    const policies = this.hops.map((hop, k) =>
      forRun(hop, k, clock, seed).withListener((event: CallEvent) => {
        activity++;
        if (event.kind === 'nestedRetry') nestedSeen[k]!++;
      }),
    );
    // A request arrives at a hop in a context of its own, made from its headers alone.
    const root: AmbientState = Ambient.run({ clock }, () => Ambient.current()!);

    const live = dependency.start(clock, stream(seed, 2).next);
    const longest = dependency.capacity.timeout;
    const toDependency = (context: AttemptContext): Promise<void> => {
      activity++;
      received[last + 1]!++;
      const second = Math.floor(clock.now() / 1000);
      if (second < seconds) perRequests[second]!++;
      return live.request(context.bound > longest ? undefined : context.signal);
    };
    const works: ((context: AttemptContext) => Promise<void>)[] = [];
    for (let k = last; k >= 0; k--) {
      if (k === last) {
        works[k] = toDependency;
        continue;
      }
      const below = policies[k + 1]!;
      const belowWork = works[k + 1]!;
      const mayRetry = policies[k]!.options.attempts > 1;
      works[k] = (context) => {
        activity++;
        received[k + 1]!++;
        const changes: AmbientChanges = {};
        if (mayRetry && context.attempt === 1) {
          changes.nestedRetry = true;
          if (nested === 'singleShot') changes.singleShot = true;
        }
        const remaining = Math.min(context.bound, Ambient.remaining() ?? Infinity);
        if (remaining !== Infinity) changes.remaining = Math.max(0, Math.floor(remaining));
        return Ambient.enter(root, () =>
          Ambient.run(changes, () => below.run(belowWork, { signal: context.signal })),
        ).catch((error: unknown) => {
          if (context.signal.aborted) throw context.signal.reason;
          // What the resilient fetch makes of the answer: a refusal by the hop below is relayed as it is.
          const answer = HopAnswerError.of(error);
          throw answer.status === 503 && answer.reason !== undefined
            ? new RelayedRefusalError(
                answer.reason as RejectionReason,
                answer.retryAfter,
                `hop ${k + 2}`,
              )
            : answer;
        });
      };
    }

    let calls = 0;
    let settled = 0;
    let succeeded = 0;
    const durations: number[] = [];
    const frontend = policies[0]!;
    const frontWork = works[0]!;
    const nextArrival = load.schedule(stream(seed, 3).next);
    const arrive = (): void => {
      const second = Math.floor(clock.now() / 1000);
      perCalls[second]!++;
      calls++;
      received[0]!++;
      void Ambient.enter(root, () => frontend.tryRun(frontWork)).then((result) => {
        activity++;
        settled++;
        durations.push(result.duration);
        if (result.ok) {
          succeeded++;
          perSucceeded[second]!++;
        }
      });
      const at = nextArrival();
      if (at < duration) clock.setTimer(at - clock.now(), arrive);
    };
    const first = nextArrival();
    if (first < duration) clock.setTimer(first, arrive);

    const stopAt = duration + drainLimit;
    const changes = (): number => clock.changes + activity;
    for (;;) {
      if (clock.now() >= duration && settled === calls) break;
      if (!clock.fireDue(stopAt)) break;
      await settleMicrotasks(changes);
    }
    return new ChainReport({
      seed,
      duration,
      hops: policies.map((policy, k) => policy.name || `hop ${k + 1}`),
      dependency: dependency.toString(),
      load: load.toString(),
      nested,
      calls,
      succeeded,
      unfinished: calls - settled,
      received,
      nestedRetry: nestedSeen,
      durations,
      seconds: { calls: perCalls, requests: perRequests, succeeded: perSucceeded },
    });
  }
}

/**
 * Hop `k`'s policy for one run: the run's clock, its own random stream, a fresh bucket (an automatic
 * budget with the same parameters for `of`/`shared`), and `Classifier.http` when it classifies by
 * default — its attempts go to an HTTP service.
 */
function forRun(policy: Policy, k: number, clock: VirtualClock, seed: number): Policy {
  const budget = policy.options.budget;
  if (budget.kind === 'using') {
    throw new PolicyConfigError(
      `hops[${k}].budget`,
      'RetryBudget.using(bucket)',
      'cannot be simulated: the bucket belongs to another clock; use RetryBudget.automatic or RetryBudget.of(options)',
    );
  }
  if (policy.options.breaker?.kind === 'using') {
    throw new PolicyConfigError(
      `hops[${k}].breaker`,
      'Breaker.using(instance)',
      'cannot be simulated: the breaker belongs to another clock; use Breaker.default or Breaker.with(settings)',
    );
  }
  const runBudget =
    budget.kind === 'of' || budget.kind === 'shared'
      ? RetryBudget.tokenBucket(budget.options as RetryBudgetOptions)
      : budget;
  const classifier =
    policy.options.classifier === Classifier.default ? Classifier.http : policy.options.classifier;
  return policy.with({ clock, random: stream(seed, 10 + k).next, budget: runBudget, classifier });
}

/**
 * Starts describing a chain: `hops` are the services' policies, frontend first.
 * @throws PolicyConfigError naming `hops` unless it is an array of 1 to 8 Policies.
 */
export function chainOf(hops: readonly Policy[]): ChainBuilder {
  if (!Array.isArray(hops) || hops.length < 1 || hops.length > 8)
    throw new PolicyConfigError(
      'hops',
      hops,
      'must be an array of 1 to 8 policies, frontend first',
    );
  hops.forEach((hop, k) => {
    if (
      hop === null ||
      typeof hop !== 'object' ||
      typeof hop.with !== 'function' ||
      typeof hop.tryRun !== 'function'
    ) {
      throw new PolicyConfigError(
        `hops[${k}]`,
        hop,
        'must be a Policy (Resilience.default.with({ ... }))',
      );
    }
  });
  return new ChainBuilder(Object.freeze([...hops]));
}
