import {
  type Clock,
  PolicyConfigError,
  rejectUnknownKeys,
  sleep,
  SystemClock,
} from '../core/index.js';
import { BOOLEAN_RULE, checkValue } from '../core/internal.js';
import {
  type FetchFunction,
  type HeaderValues,
  type ResponseBody,
  checkResponseParts,
  fetchSignal,
  fetchUrl,
  syntheticResponse,
} from './fetch-function.js';
import { checkClock, checkDuration, checkRate, checkStatus } from './option-checks.js';
import { SeededRandom } from './seeded-random.js';

/** The error a {@link Chaos} fault throws unless a `fault` factory is given. Classified Transient by default. */
export class ChaosFaultError extends Error {
  override readonly name = 'ChaosFaultError';
  /** @param message default `'fault injected by Chaos'` */
  constructor(message = 'fault injected by Chaos') {
    super(message);
  }
}

/** Options of {@link Chaos}; every rate is a probability in [0, 1] drawn per call. */
export interface ChaosOptions {
  /** `false` makes {@link Chaos.inject} and {@link Chaos.fetch} return the function they are given (default `true`). */
  readonly enabled?: boolean;
  /** Probability that a call fails instead of running (default 0). */
  readonly faultRate?: number;
  /** Milliseconds a slowed call waits on the clock before going on (default 0). */
  readonly latency?: number;
  /** Probability that a call is slowed by `latency` (default 0). */
  readonly latencyRate?: number;
  /**
   * Outcome injection: when set, a fault resolves with `outcome()` (a value the classifier must judge,
   * such as a 503 `Response`) instead of throwing. Called once per fault so each gets a fresh value.
   * Not allowed together with `fault`.
   */
  readonly outcome?: () => unknown;
  /** Makes the error a fault throws, once per fault (default `() => new ChaosFaultError()`). */
  readonly fault?: () => unknown;
  /** Seed of the draws, an integer in [0, 2^32 - 1] (default 1). */
  readonly seed?: number;
  /** The clock latency waits on (default `SystemClock.instance`; pass your test's `FakeClock`). */
  readonly clock?: Clock;
}

/** Options of {@link Chaos.fetch}: synthetic HTTP answers on top of the instance's faults and latency. */
export interface ChaosFetchOptions {
  /** Probability that a request is answered with a synthetic `status` response instead of being sent (default 0). */
  readonly statusRate?: number;
  /** The synthetic response's status, an integer in [200, 599] (default 503). */
  readonly status?: number;
  /** The synthetic response's headers (e.g. `{ 'retry-after': '2' }`). */
  readonly headers?: HeaderValues;
  /** The synthetic response's body (default none). */
  readonly body?: ResponseBody;
}

/** What a {@link Chaos} instance has done so far, across every function it wrapped. */
export interface ChaosStats {
  /** Calls made through wrapped functions. */
  readonly calls: number;
  /** Calls slowed by `latency` (only counted when `latency > 0`). */
  readonly delayed: number;
  /** Calls that failed (or returned `outcome`) instead of running. */
  readonly faults: number;
  /** Requests answered with a synthetic status by {@link Chaos.fetch}. */
  readonly statuses: number;
}

const CHAOS_KEYS = [
  'enabled',
  'faultRate',
  'latency',
  'latencyRate',
  'outcome',
  'fault',
  'seed',
  'clock',
] as const;
const FETCH_KEYS = ['statusRate', 'status', 'headers', 'body'] as const;

/**
 * Fault injection that runs inside the policy, so the classifier, retry budget and breaker see each
 * injected failure exactly like a real one.
 *
 * ```ts
 * const chaos = new Chaos({ faultRate: 0.1, latency: 500, latencyRate: 0.2, seed: 42, clock });
 * const work = chaos.inject((ctx: AttemptContext) => orders.load(id, ctx.signal));
 * await policy.run(work);
 * ```
 *
 * Draws, so that runs reproduce: one `SeededRandom` stream per instance, shared by every function it
 * wraps. Each call of an injected function takes exactly two draws, synchronously when it is called:
 * first latency (`u < latencyRate`), then fault (`u < faultRate`); each request through
 * {@link Chaos.fetch} takes a third, status (`u < statusRate`). The number of draws never depends on
 * the outcome, so the same seed and the same order of calls give the same faults, delays and statuses
 * whatever the rates of the other effects.
 *
 * Precedence: latency applies first (a call may be both slowed and faulted: a slow failure); then a
 * fault replaces the call (thrown `fault()`, or returned `outcome()` when set); then, for fetch only,
 * a synthetic status response replaces the request; otherwise the wrapped function runs. A call
 * neither slowed nor faulted calls the wrapped function directly and returns what it returns.
 *
 * `enabled: false` returns the function given, untouched: a boolean checked once at wrap time, so
 * chaos can stay wired in production and be turned on for a game day by configuration.
 */
export class Chaos {
  /** Whether wrapping injects anything (fixed at construction). */
  readonly enabled: boolean;
  /** Probability of a fault per call. */
  readonly faultRate: number;
  /** Milliseconds a slowed call waits. */
  readonly latency: number;
  /** Probability that a call is slowed. */
  readonly latencyRate: number;
  /** Seed of the draws. */
  readonly seed: number;

  private readonly outcome: (() => unknown) | undefined;
  private readonly fault: () => unknown;
  private readonly clock: Clock;
  private readonly random: SeededRandom;
  private counts = { calls: 0, delayed: 0, faults: 0, statuses: 0 };

  /**
   * @param options see {@link ChaosOptions}; all optional.
   * @throws PolicyConfigError naming the field, the value and the rule: a rate outside [0, 1], a
   *   negative or non-finite latency, a seed that is not an integer in [0, 2^32 - 1], `outcome`
   *   together with `fault`, a non-function factory, a non-Clock clock, or an unknown option.
   */
  constructor(options: ChaosOptions = {}) {
    checkKeys(options, CHAOS_KEYS, 'Chaos');
    const {
      enabled = true,
      faultRate = 0,
      latency = 0,
      latencyRate = 0,
      outcome,
      fault,
      seed = 1,
    } = options;
    const clock = options.clock ?? SystemClock.instance;
    this.enabled = checkValue(BOOLEAN_RULE, 'enabled', enabled);
    this.faultRate = checkRate('faultRate', faultRate);
    this.latency = checkDuration('latency', latency);
    this.latencyRate = checkRate('latencyRate', latencyRate);
    if (outcome !== undefined && typeof outcome !== 'function') {
      throw new PolicyConfigError(
        'outcome',
        outcome,
        'must be a function returning the injected outcome',
      );
    }
    if (fault !== undefined && typeof fault !== 'function') {
      throw new PolicyConfigError(
        'fault',
        fault,
        'must be a function returning the error to throw',
      );
    }
    if (outcome !== undefined && fault !== undefined) {
      throw new PolicyConfigError(
        'outcome',
        outcome,
        'must not be set together with fault (a fault either throws fault() or returns outcome())',
      );
    }
    checkClock('clock', clock);
    this.random = new SeededRandom(seed);
    this.seed = seed;
    this.outcome = outcome;
    this.fault = fault ?? (() => new ChaosFaultError());
    this.clock = clock;
  }

  /** Counts of calls, delays, faults and synthetic statuses so far (a snapshot). */
  get stats(): ChaosStats {
    return { ...this.counts };
  }

  /**
   * Wraps an async function so each call may be slowed, fail, or return the injected outcome.
   * A slowed call waits on the clock and obeys an `AbortSignal` found as the first argument or as its
   * `signal` property (a policy's attempt context fits): an abort rejects with the signal's reason and
   * clears the timer. The signal is read only when a call is slowed.
   * @param fn the function to wrap; `this` is passed through.
   * @returns `fn` itself when disabled; otherwise a function with the same signature.
   */
  inject<F extends (...args: never[]) => PromiseLike<unknown>>(fn: F): F {
    if (!this.enabled) return fn;
    const chaos = this;
    return function (this: unknown, ...args: Parameters<F>) {
      const slow = chaos.drawLatency();
      const fault = chaos.drawFault();
      if (!slow && !fault) return fn.apply(this, args);
      return chaos.misbehave(
        slow,
        fault,
        () => signalIn(args[0]),
        () => fn.apply(this, args),
      );
    } as F;
  }

  /**
   * Wraps a fetch function: the instance's latency and faults apply per request (the signal obeyed is
   * `init.signal`, else the input `Request`'s), and with probability `statusRate` the request is not
   * sent and a synthetic response with `status` answers instead.
   * @param fetchFn the fetch to wrap (the global `fetch`, a `ScriptedFetch#fetch`, …)
   * @param options `statusRate` (default 0), `status` (default 503), `headers`, `body`
   * @returns `fetchFn` itself when disabled; otherwise a fetch with the same signature.
   * @throws PolicyConfigError naming the field for an invalid rate, status, header, body or unknown option.
   */
  fetch<F extends FetchFunction>(fetchFn: F, options: ChaosFetchOptions = {}): F {
    checkKeys(options, FETCH_KEYS, 'Chaos.fetch');
    const statusRate = checkRate('statusRate', options.statusRate ?? 0);
    const status = checkStatus('status', options.status ?? 503);
    const { headers, body } = options;
    checkResponseParts(status, { headers, body });
    if (!this.enabled) return fetchFn;
    const chaos = this;
    const wrapped: FetchFunction = (input, init) => {
      const slow = chaos.drawLatency();
      const fault = chaos.drawFault();
      const synthetic = chaos.random.next() < statusRate;
      if (!slow && !fault && !synthetic) return fetchFn(input, init);
      return chaos.misbehave(
        slow,
        fault,
        () => fetchSignal(input, init),
        () => {
          if (!synthetic) return fetchFn(input, init);
          chaos.counts.statuses++;
          return syntheticResponse(status, fetchUrl(input), { headers, body });
        },
      ) as Promise<Response>;
    };
    return wrapped as F;
  }

  private drawLatency(): boolean {
    this.counts.calls++;
    const slow = this.random.next() < this.latencyRate && this.latency > 0;
    if (slow) this.counts.delayed++;
    return slow;
  }

  private drawFault(): boolean {
    const fault = this.random.next() < this.faultRate;
    if (fault) this.counts.faults++;
    return fault;
  }

  private async misbehave(
    slow: boolean,
    fault: boolean,
    signal: () => AbortSignal | undefined,
    proceed: () => unknown,
  ): Promise<unknown> {
    if (slow) await sleep(this.clock, this.latency, signal());
    if (fault) {
      if (this.outcome !== undefined) return this.outcome();
      throw this.fault();
    }
    return proceed();
  }
}

/** The signal of a call's first argument: the argument itself, or its `signal` property. */
function signalIn(first: unknown): AbortSignal | undefined {
  if (first instanceof AbortSignal) return first;
  if (typeof first === 'object' && first !== null) {
    const signal = (first as { signal?: unknown }).signal;
    if (signal instanceof AbortSignal) return signal;
  }
  return undefined;
}

function checkKeys(options: object, known: readonly string[], owner: string): void {
  if (options === null || typeof options !== 'object') {
    throw new PolicyConfigError('options', options, `must be an object of ${owner} options`);
  }
  rejectUnknownKeys(options, known, '', `${owner} option`);
}
