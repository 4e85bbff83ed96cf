import {
  type Clock,
  PolicyConfigError,
  rejectUnknownKeys,
  type TimerHandle,
} from '../../core/index.js';
import {
  BOUND_RULE,
  checkValue,
  given,
  numberRule,
  POSITIVE_SPAN_RULE,
  unboundedIntegerRule,
} from '../../core/internal.js';
import { checkDuration, checkRate } from '../option-checks.js';
import { LogNormalLatency } from './latency.js';

/**
 * The capacity term of a {@link Dependency}: how much concurrent work it can do and what happens past
 * that. It is what turns retries into a storm: every extra attempt takes a worker or a queue slot, so
 * a saturated dependency gets slower for everyone, and slower means more failures and more retries.
 */
export interface DependencyCapacity {
  /** Requests served at the same time (workers), an integer >= 1. Default `Infinity` (no limit). */
  readonly concurrency: number;
  /**
   * Requests that may wait for a worker (FIFO), an integer >= 0 or `Infinity`. A request arriving when
   * every worker is busy and the queue is full fails at once with a `DependencyOverloadedError`.
   * Default `Infinity`.
   */
  readonly queue?: number;
  /**
   * Server-side timeout in ms, > 0: a request whose time inside the dependency (queue wait + service)
   * reaches it fails at that moment with a `DependencyTimeoutError` and frees its worker or queue slot.
   * Default `Infinity` (never).
   */
  readonly timeout?: number;
  /**
   * How much the dependency slows down with its own queue, a finite number >= 0: a request starts
   * service `1 + contention × queued / concurrency` times slower, `queued` being the requests waiting
   * behind the workers then (a database whose queries contend for locks and buffers). Past
   * saturation its throughput then falls as the queue grows. Default 0 (service time independent of load).
   */
  readonly contention?: number;
}

/** Options of {@link Dependency.healthy}; latencies in ms. */
export interface HealthyDependencyOptions {
  /** Median service time of one request in ms, > 0. */
  readonly p50: number;
  /** 99th-percentile service time in ms, >= `p50`. */
  readonly p99: number;
  /** Capacity term (default: unlimited workers, so latency never depends on load). */
  readonly capacity?: DependencyCapacity;
  /**
   * Service times are rounded up to a multiple of this many ms, > 0 (default 1). Coarser values let
   * more events share an instant, which makes long runs faster.
   */
  readonly resolution?: number;
}

/** Options of {@link Dependency.brownout}; durations in ms from the start of the run. */
export interface BrownoutOptions {
  /** When the brownout starts, ms >= 0 from the start of the run. */
  readonly after: number;
  /** Service-time multiplier during the window, a finite number >= 1 (8 = eight times slower). */
  readonly slower: number;
  /** How long it lasts, ms > 0. */
  readonly lasting: number;
}

/** Options of {@link Dependency.outage}; durations in ms from the start of the run. */
export interface OutageOptions {
  /** When the outage starts, ms >= 0 from the start of the run. */
  readonly after: number;
  /** How long it lasts, ms > 0. */
  readonly lasting: number;
  /** Share of requests that fail during the window, in [0, 1]. Default 1 (every request). */
  readonly errorRate?: number;
}

/** Options of {@link Dependency.tail}. */
export interface TailOptions {
  /** Share of requests that are slow, in (0, 1] (0.03 = 3 %). */
  readonly share: number;
  /** Their service-time multiplier, a finite number >= 1 (20 = twenty times slower). */
  readonly slower: number;
}

/** A window of impairment, as the report uses it; ms from the start of the run. */
export interface FaultWindow {
  /** Start of the window in ms (inclusive). */
  readonly start: number;
  /** End of the window in ms (exclusive). */
  readonly end: number;
}

interface Fault extends FaultWindow {
  readonly kind: 'brownout' | 'outage' | 'tail';
  /** Service-time multiplier (brownout, and a tail's slow requests), else 1. */
  readonly slower: number;
  /** Share of requests that are slow (tail), else 0. */
  readonly share?: number;
  /** Error rate (outage), else 0. */
  readonly errorRate: number;
}

/** A request the modelled dependency answered with an error (an outage or `failing`). Transient by default. */
export class DependencyFailureError extends Error {
  override readonly name = 'DependencyFailureError';
}

/** The modelled dependency refused a request: every worker busy and the queue full. Transient by default. */
export class DependencyOverloadedError extends Error {
  override readonly name = 'DependencyOverloadedError';
}

/** The modelled dependency gave up on a request at its server-side `timeout`. Transient by default. */
export class DependencyTimeoutError extends Error {
  override readonly name = 'DependencyTimeoutError';
}

// One shared instance per kind: building an Error captures a stack, which would dominate a long run.
const FAILURE = new DependencyFailureError('the modelled dependency answered with an error');
const OVERLOADED = new DependencyOverloadedError(
  'the modelled dependency is overloaded: every worker busy and the queue full',
);
const TIMED_OUT = new DependencyTimeoutError('the modelled dependency timed the request out');

const UNLIMITED: Required<DependencyCapacity> = Object.freeze({
  concurrency: Infinity,
  queue: Infinity,
  timeout: Infinity,
  contention: 0,
});
const CAPACITY_KEYS = ['concurrency', 'queue', 'timeout', 'contention'];

/**
 * A model of the dependency a simulated policy calls (DESIGN §8): an immutable value, combined by
 * chaining, that a simulation run turns into a live queue on its virtual clock.
 *
 * Physics, per request (one attempt of a call):
 * 1. Service time: a draw from a log-normal distribution fitted to `p50` and `p99` (ms), times the
 *    product of the `slower` factors of every brownout active when the request arrives, rounded up to
 *    `resolution` ms.
 * 2. Errors: with the combined probability of `failing(rate)` and every active outage's `errorRate`
 *    (independent), the request is served normally but answers with a `DependencyFailureError`. An
 *    erroring request costs a worker for its (unslowed) service time, like a real request that fails.
 * 3. Capacity: at most `concurrency` requests are served at once; the rest wait FIFO in a queue of
 *    `queue` slots; a request that finds the queue full fails at once (`DependencyOverloadedError`). A
 *    request whose time inside reaches `timeout` ms fails then (`DependencyTimeoutError`) and frees its
 *    place. So past saturation, latency grows by the queue wait and, past the timeout, requests fail.
 * 4. Cancellation: when the attempt's signal aborts (attempt timeout, deadline), the request leaves the
 *    queue or frees its worker at once and rejects with the signal's reason.
 *
 * ```ts
 * const api = Dependency.healthy({ p50: 20, p99: 200, capacity: { concurrency: 100, timeout: 1000 } })
 *   .brownout({ after: 30_000, slower: 8, lasting: 60_000 });
 * ```
 */
export class Dependency {
  private constructor(
    /** Service-time distribution (healthy). @internal read by the simulator. */
    readonly latency: LogNormalLatency,
    /** The capacity term (every field filled; `Infinity` = no limit). */
    readonly capacity: Required<DependencyCapacity>,
    /** Rounding step of service times in ms. */
    readonly resolution: number,
    /** Share of requests failing at all times (`failing`). */
    readonly failureRate: number,
    private readonly faults: readonly Fault[],
  ) {}

  /**
   * A healthy dependency: log-normal service times with median `p50` and 99th percentile `p99` (ms),
   * optionally with a capacity term.
   * @throws PolicyConfigError naming `p50`, `p99`, `resolution` or `capacity.<field>` for a bad value.
   */
  static healthy(options: HealthyDependencyOptions): Dependency {
    if (options === null || typeof options !== 'object') {
      throw new PolicyConfigError(
        'dependency',
        options,
        'must be an object { p50, p99, capacity?, resolution? }',
      );
    }
    const latency = new LogNormalLatency(options.p50, options.p99);
    const resolution = checkValue(BOUND_RULE, 'resolution', given(options.resolution, 1));
    return new Dependency(latency, checkCapacity(options.capacity), resolution, 0, []);
  }

  /**
   * This dependency with its capacity term replaced.
   * @throws PolicyConfigError naming `capacity.<field>` for a bad value.
   */
  withCapacity(capacity: DependencyCapacity): Dependency {
    return new Dependency(
      this.latency,
      checkCapacity(capacity),
      this.resolution,
      this.failureRate,
      this.faults,
    );
  }

  /**
   * This dependency, `slower` times slower from `after` for `lasting` ms (service time × `slower` for
   * requests arriving in the window; requests already being served keep their service time).
   * @throws PolicyConfigError naming `after`, `slower` or `lasting` for a bad value.
   */
  brownout(options: BrownoutOptions): Dependency {
    const after = checkDuration('after', options?.after);
    const lasting = checkValue(BOUND_RULE, 'lasting', options?.lasting);
    const slower = options.slower;
    if (typeof slower !== 'number' || !Number.isFinite(slower) || slower < 1) {
      throw new PolicyConfigError(
        'slower',
        slower,
        'must be a finite multiplier >= 1 (8 = eight times slower)',
      );
    }
    return this.withFault({
      kind: 'brownout',
      start: after,
      end: after + lasting,
      slower,
      errorRate: 0,
    });
  }

  /**
   * This dependency failing a share `errorRate` (default 1) of requests from `after` for `lasting` ms.
   * @throws PolicyConfigError naming `after`, `lasting` or `errorRate` for a bad value.
   */
  outage(options: OutageOptions): Dependency {
    const after = checkDuration('after', options?.after);
    const lasting = checkValue(BOUND_RULE, 'lasting', options?.lasting);
    const errorRate = checkRate('errorRate', options.errorRate ?? 1);
    return this.withFault({
      kind: 'outage',
      start: after,
      end: after + lasting,
      slower: 1,
      errorRate,
    });
  }

  /**
   * This dependency with a slow tail for the whole run: each request is, independently with
   * probability `share`, `slower` times slower than its draw; nothing fails because of it (the
   * requests hedging is for).
   * @throws PolicyConfigError naming `share` or `slower` for a bad value.
   */
  tail(options: TailOptions): Dependency {
    const share = options?.share;
    if (typeof share !== 'number' || !(share > 0 && share <= 1))
      throw new PolicyConfigError('share', share, 'must be a share of requests in (0, 1]');
    const slower = options.slower;
    if (typeof slower !== 'number' || !Number.isFinite(slower) || slower < 1) {
      throw new PolicyConfigError(
        'slower',
        slower,
        'must be a finite multiplier >= 1 (20 = twenty times slower)',
      );
    }
    return this.withFault({ kind: 'tail', start: 0, end: Infinity, slower, errorRate: 0, share });
  }

  /**
   * This dependency failing a share `rate` of requests for the whole run (combined independently
   * with any earlier `failing` and with outages).
   * @throws PolicyConfigError naming `rate` unless it is in [0, 1].
   */
  failing(rate: number): Dependency {
    checkRate('rate', rate);
    const combined = 1 - (1 - this.failureRate) * (1 - rate);
    return new Dependency(this.latency, this.capacity, this.resolution, combined, this.faults);
  }

  /**
   * The impairment window: from the earliest brownout or outage start to the latest end (ms), or
   * `undefined` without one (`failing` alone is not a window: it never ends).
   */
  get faultWindow(): FaultWindow | undefined {
    let start = Infinity;
    let end = -Infinity;
    for (const fault of this.faults) {
      // A tail is the dependency's nature, not a window of impairment.
      if (fault.kind === 'tail') continue;
      if (fault.start < start) start = fault.start;
      if (fault.end > end) end = fault.end;
    }
    return start === Infinity ? undefined : { start, end };
  }

  /** A one-line description, e.g. `healthy p50 20ms p99 200ms, 100 workers, timeout 1000ms; brownout ×8 30s–90s`. */
  toString(): string {
    const c = this.capacity;
    let text = `healthy p50 ${this.latency.p50}ms p99 ${this.latency.p99}ms`;
    if (c.concurrency !== Infinity) text += `, ${c.concurrency} workers`;
    if (c.queue !== Infinity) text += `, queue ${c.queue}`;
    if (c.timeout !== Infinity) text += `, timeout ${c.timeout}ms`;
    if (c.contention > 0) text += `, contention ${c.contention}`;
    if (this.failureRate > 0) text += `; failing ${round(this.failureRate * 100)}%`;
    for (const f of this.faults) {
      const window = `${round(f.start / 1000)}s–${round(f.end / 1000)}s`;
      text +=
        f.kind === 'tail'
          ? `; tail ${round(f.share! * 100)}% ×${f.slower}`
          : f.kind === 'brownout'
            ? `; brownout ×${f.slower} ${window}`
            : `; outage ${round(f.errorRate * 100)}% ${window}`;
    }
    return text;
  }

  /**
   * Starts a live instance of this model on `clock`, drawing from `random`.
   * @internal used by the simulator.
   */
  start(clock: Clock, random: () => number): LiveDependency {
    return new LiveDependency(this, clock, random);
  }

  /** Service-time multiplier and error rate at time `now` (ms). @internal */
  conditionsAt(
    now: number,
    into: { slower: number; errorRate: number; tailShare?: number; tailSlower?: number },
  ): void {
    let slower = 1;
    let ok = 1 - this.failureRate;
    for (const fault of this.faults) {
      if (fault.kind === 'tail') {
        into.tailShare = fault.share!;
        into.tailSlower = fault.slower;
      } else if (now >= fault.start && now < fault.end) {
        slower *= fault.slower;
        ok *= 1 - fault.errorRate;
      }
    }
    into.slower = slower;
    into.errorRate = 1 - ok;
  }

  private withFault(fault: Fault): Dependency {
    return new Dependency(this.latency, this.capacity, this.resolution, this.failureRate, [
      ...this.faults,
      fault,
    ]);
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

const CONCURRENCY_RULE = unboundedIntegerRule(1);
const QUEUE_RULE = unboundedIntegerRule(0);
const CONTENTION_RULE = numberRule(
  'must be a finite number >= 0 (0 = service time independent of the queue)',
  (v) => v >= 0,
);

function checkCapacity(capacity: DependencyCapacity | undefined): Required<DependencyCapacity> {
  if (capacity === undefined) return UNLIMITED;
  if (capacity === null || typeof capacity !== 'object') {
    throw new PolicyConfigError(
      'capacity',
      capacity,
      'must be an object { concurrency, queue?, timeout?, contention? }',
    );
  }
  rejectUnknownKeys(capacity, CAPACITY_KEYS, 'capacity', 'capacity option');
  const { concurrency = Infinity, queue = Infinity, timeout = Infinity, contention = 0 } = capacity;
  return Object.freeze({
    concurrency: checkValue(CONCURRENCY_RULE, 'capacity.concurrency', concurrency),
    queue: checkValue(QUEUE_RULE, 'capacity.queue', queue),
    timeout: checkValue(POSITIVE_SPAN_RULE, 'capacity.timeout', timeout),
    contention: checkValue(CONTENTION_RULE, 'capacity.contention', contention),
  });
}

/** One request inside a {@link LiveDependency}. */
class Request {
  /** 0 queued, 1 in service, 2 done. */
  state = 0;
  timer: TimerHandle | undefined = undefined;
  service = 0;
  fails = false;
  onAbort: (() => void) | undefined = undefined;
  constructor(
    readonly arrival: number,
    readonly signal: AbortSignal | undefined,
    readonly resolve: () => void,
    readonly reject: (error: unknown) => void,
  ) {}
}

/**
 * A running {@link Dependency}: workers, a FIFO queue and timers on the run's clock.
 * @internal the simulator's; its counters feed the report.
 */
export class LiveDependency {
  /** Requests received. */
  requests = 0;
  /** Requests being served now. */
  busy = 0;
  /** Requests refused because the queue was full. */
  overloaded = 0;
  /** Requests that hit the server-side timeout. */
  timedOut = 0;
  /** Requests answered with an injected error. */
  failed = 0;
  /** Requests that left early because their signal aborted. */
  abandoned = 0;

  private readonly concurrency: number;
  private readonly queueLimit: number;
  private readonly timeout: number;
  private readonly contention: number;
  private readonly resolution: number;
  private queue: (Request | undefined)[] = [];
  private head = 0;
  private queued = 0;
  private readonly conditions = { slower: 1, errorRate: 0, tailShare: 0, tailSlower: 1 };

  constructor(
    private readonly model: Dependency,
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {
    this.concurrency = model.capacity.concurrency;
    this.queueLimit = model.capacity.queue;
    this.timeout = model.capacity.timeout;
    this.contention = model.capacity.contention;
    this.resolution = model.resolution;
  }

  /**
   * One request: resolves when served, rejects with a dependency error or the signal's reason.
   * @param signal the attempt's signal, or `undefined` when nothing can abort the attempt
   */
  request(signal: AbortSignal | undefined): Promise<void> {
    this.requests++;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.clock.now();
    const conditions = this.conditions;
    this.model.conditionsAt(now, conditions);
    const fails = conditions.errorRate > 0 && this.random() < conditions.errorRate;
    let draw = this.model.latency.sample(this.random) * (fails ? 1 : conditions.slower);
    // Drawn only with a tail, so the other models' random streams are unchanged.
    if (conditions.tailShare > 0 && this.random() < conditions.tailShare)
      draw *= conditions.tailSlower;
    const step = this.resolution;
    const service = Math.max(step, Math.ceil(draw / step) * step);
    if (this.busy >= this.concurrency && this.queued >= this.queueLimit) {
      this.overloaded++;
      return Promise.reject(OVERLOADED);
    }
    return new Promise<void>((resolve, reject) => {
      const request = new Request(now, signal, resolve, reject);
      request.service = service;
      request.fails = fails;
      if (signal !== undefined) {
        const onAbort = (): void => this.abandon(request);
        request.onAbort = onAbort;
        signal.addEventListener('abort', onAbort, { once: true });
      }
      if (this.busy < this.concurrency) this.serve(request);
      else {
        this.queue.push(request);
        this.queued++;
        if (this.timeout !== Infinity)
          request.timer = this.clock.setTimer(this.timeout, () => this.expire(request));
      }
    });
  }

  private serve(request: Request): void {
    request.state = 1;
    this.busy++;
    if (this.contention > 0)
      request.service =
        Math.ceil(
          (request.service * (1 + (this.contention * this.queued) / this.concurrency)) /
            this.resolution,
        ) * this.resolution;
    const left = request.arrival + this.timeout - this.clock.now();
    if (left < request.service)
      request.timer = this.clock.setTimer(left, () => this.expire(request));
    else request.timer = this.clock.setTimer(request.service, () => this.complete(request));
  }

  private complete(request: Request): void {
    this.finish(request);
    if (request.fails) {
      this.failed++;
      request.reject(FAILURE);
    } else request.resolve();
  }

  private expire(request: Request): void {
    this.finish(request);
    this.timedOut++;
    request.reject(TIMED_OUT);
  }

  private abandon(request: Request): void {
    if (request.state === 2) return;
    if (request.timer !== undefined) this.clock.clearTimer(request.timer);
    request.onAbort = undefined; // the listener was `once`
    this.finish(request);
    this.abandoned++;
    request.reject(request.signal!.reason);
  }

  /** Takes `request` out of the queue or off its worker and lets the next queued request in. */
  private finish(request: Request): void {
    const state = request.state;
    request.state = 2;
    request.timer = undefined;
    if (request.onAbort !== undefined) {
      request.signal!.removeEventListener('abort', request.onAbort);
      request.onAbort = undefined;
    }
    if (state === 0) {
      // Leaves the queue: the slot is blanked and skipped when the head reaches it.
      const index = this.queue.indexOf(request, this.head);
      if (index >= 0) this.queue[index] = undefined;
      this.queued--;
      return;
    }
    this.busy--;
    this.admitNext();
  }

  private admitNext(): void {
    const queue = this.queue;
    while (this.busy < this.concurrency && this.queued > 0) {
      const next = queue[this.head];
      queue[this.head++] = undefined;
      if (next === undefined) continue;
      this.queued--;
      if (next.timer !== undefined) this.clock.clearTimer(next.timer);
      this.serve(next);
    }
    if (this.head > 1024 && this.head * 2 > queue.length) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
  }
}
