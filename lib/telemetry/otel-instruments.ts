import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type ObservableResult,
  ValueType,
} from '@opentelemetry/api';
import { ConcurrencyLimiter, type ExecutablePolicy } from '../core/index.js';
import {
  BREAKER_STATE_VALUES,
  CALL_DURATION_BUCKETS_MS,
  MetricNames,
  TelemetryAttributes,
} from './telemetry-names.js';

// The instruments of one meter and the attribute sets they record with (DESIGN §7): every set built
// once per (policy, host, service) and reused, so the hot path never builds attributes.

/**
 * A running total for one attribute set of an observable counter: the hot path adds to a number, the
 * SDK reads the totals when it collects (OpenTelemetry JS hashes the attributes of every synchronous
 * `add`, which would cost more than the call being protected). Shared by every listener of one meter.
 */
export class Tally {
  count = 0;
  constructor(readonly attributes: Attributes) {}
}

/** The attributes every series of a policy carries: its name, and host and service where known. */
export function baseAttributes(
  policy: string,
  host: string | undefined,
  service: string | undefined,
): Attributes {
  const base: Attributes = { [TelemetryAttributes.policy]: policy };
  if (host !== undefined) base[TelemetryAttributes.host] = host;
  if (service !== undefined) base[TelemetryAttributes.service] = service;
  return Object.freeze(base);
}

/**
 * The attribute sets of one (policy, host, service), each built once and reused for every record;
 * the common ones (a succeeded call, an Ok attempt) one field away.
 */
export class AttributeSets {
  readonly base: Attributes;
  /**
   * The keyed families' keys recording through these sets now (each key's `dependency` label, kept
   * across the key's instances): when the last one is retired, the sets and their tallies go.
   */
  readonly holders = new Set<object>();
  /** Every tally these sets handed out (to drop them with the sets). */
  readonly tallies: Tally[] = [];
  private succeeded: Tally | undefined = undefined;
  private ok: Tally | undefined = undefined;
  /** Calls tallies by outcome, then reason: one reason may end in several outcomes (`limited`: `rejected`, `fallback`). */
  private readonly byOutcome = new Map<string, Map<string, Tally>>();
  private readonly byVerdict = new Map<string, Tally>();
  private readonly byRejection = new Map<string, Attributes>();

  constructor(
    readonly policy: string,
    host: string | undefined,
    service: string | undefined,
    private readonly instruments: Instruments,
  ) {
    this.base = baseAttributes(policy, host, service);
  }

  /** The calls tally for `policy` + `outcome` (terminal kind) + `reason`. */
  call(outcome: string, reason: string): Tally {
    if (reason === 'succeeded') return (this.succeeded ??= this.callSlow(outcome, reason));
    return this.callSlow(outcome, reason);
  }

  private callSlow(outcome: string, reason: string): Tally {
    let byReason = this.byOutcome.get(outcome);
    if (byReason === undefined) {
      byReason = new Map();
      this.byOutcome.set(outcome, byReason);
    }
    let tally = byReason.get(reason);
    if (tally === undefined) {
      tally = this.instruments.callTally({
        ...this.base,
        [TelemetryAttributes.outcome]: outcome,
        [TelemetryAttributes.reason]: reason,
      });
      byReason.set(reason, tally);
      this.tallies.push(tally);
    }
    return tally;
  }

  /** The attempts tally for `policy` + `outcome` (the attempt's verdict). */
  attempt(verdict: string): Tally {
    if (verdict === 'Ok') return (this.ok ??= this.attemptSlow(verdict));
    return this.attemptSlow(verdict);
  }

  private attemptSlow(verdict: string): Tally {
    let tally = this.byVerdict.get(verdict);
    if (tally === undefined) {
      tally = this.instruments.attemptTally({
        ...this.base,
        [TelemetryAttributes.outcome]: verdict,
      });
      this.byVerdict.set(verdict, tally);
      this.tallies.push(tally);
    }
    return tally;
  }

  /** `policy` + `reason` of a refusal. */
  rejection(reason: string): Attributes {
    let set = this.byRejection.get(reason);
    if (set === undefined) {
      set = Object.freeze({ ...this.base, [TelemetryAttributes.reason]: reason });
      this.byRejection.set(reason, set);
    }
    return set;
  }
}

/** A policy the gauges observe: the last instance of that name (and host, service) that ran a call. */
interface Observed {
  readonly policy: ExecutablePolicy;
  readonly attributes: Attributes;
}

/** The instruments of one meter: created once, shared by every policy recording through that meter. */
export class Instruments {
  readonly rejections: Counter;
  readonly hedges: Counter;
  readonly hedgeWins: Counter;
  readonly stalls: Counter;
  readonly streamResumed: Counter;
  readonly nestedRetries: Counter;
  readonly limiterDegraded: Counter;
  readonly configReloads: Counter;
  readonly duration: Histogram;
  private readonly observed = new Map<string, Observed>();
  private readonly calls = new Map<string, Tally>();
  private readonly attempts = new Map<string, Tally>();
  private readonly sets = new Map<string, AttributeSets>();

  constructor(meter: Meter) {
    const int = { valueType: ValueType.INT };
    meter
      .createObservableCounter(MetricNames.calls, {
        ...int,
        unit: '{call}',
        description: 'Logical calls, one per call whatever its attempts.',
      })
      .addCallback((result) => {
        for (const tally of this.calls.values()) result.observe(tally.count, tally.attributes);
      });
    meter
      .createObservableCounter(MetricNames.attempts, {
        ...int,
        unit: '{attempt}',
        description:
          'Attempts that reached the dependency; attempts / calls is the load multiplier.',
      })
      .addCallback((result) => {
        for (const tally of this.attempts.values()) result.observe(tally.count, tally.attributes);
      });
    this.rejections = meter.createCounter(MetricNames.rejections, {
      ...int,
      unit: '{call}',
      description: 'Refusals by a guard of this process, by reason.',
    });
    this.hedges = meter.createCounter(MetricNames.hedges, {
      ...int,
      unit: '{attempt}',
      description: 'Hedged attempts started.',
    });
    this.hedgeWins = meter.createCounter(MetricNames.hedgeWins, {
      ...int,
      unit: '{call}',
      description: 'Calls a hedged attempt answered first.',
    });
    this.stalls = meter.createCounter(MetricNames.stalls, {
      ...int,
      unit: '{attempt}',
      description: 'Attempts ended because their data stalled.',
    });
    this.streamResumed = meter.createCounter(MetricNames.streamResumed, {
      ...int,
      unit: '{stream}',
      description: 'Streams resumed after a mid-stream failure.',
    });
    this.nestedRetries = meter.createCounter(MetricNames.nestedRetries, {
      ...int,
      unit: '{call}',
      description:
        'Calls that may retry made while serving a request an upper hop may retry (X-NResilience-Retrying: 1): retries multiply across hops.',
    });
    this.limiterDegraded = meter.createCounter(MetricNames.limiterDegraded, {
      ...int,
      unit: '{episode}',
      description:
        'Episodes of a shared rate limit running on the local share because its store failed.',
    });
    this.configReloads = meter.createCounter(MetricNames.configReloads, {
      ...int,
      unit: '{reload}',
      description: 'Config reloads, applied (reloaded) or refused (reloadFailed).',
    });
    this.duration = meter.createHistogram(MetricNames.callDuration, {
      unit: 'ms',
      description: 'Duration of a logical call, attempts, backoff and pauses included.',
      advice: { explicitBucketBoundaries: [...CALL_DURATION_BUCKETS_MS] },
    });
    meter
      .createObservableGauge(MetricNames.breakerState, {
        ...int,
        description:
          "Breaker state: 0 closed, 1 recovering, 2 half-open, 3 open, 4 isolated; a policy's own series, the worst of its hosts' or services'.",
      })
      .addCallback((result) =>
        this.observeEach(result, (policy) => {
          const breaker = policy.breaker();
          return breaker === undefined ? undefined : BREAKER_STATE_VALUES[breaker.state];
        }),
      );
    meter
      .createObservableGauge(MetricNames.budgetUtilization, {
        unit: '1',
        description: 'Retry-budget utilization: 0 full bucket, 1 empty (retries refused).',
      })
      .addCallback((result) => this.observeEach(result, (policy) => policy.bucket()?.utilization));
    meter
      .createObservableGauge(MetricNames.limit, {
        ...int,
        unit: '{call}',
        description:
          'Calls the concurrency limit allows in flight now (the adaptive limit as it stands).',
      })
      .addCallback((result) =>
        this.observeOwn(result, (policy) => concurrencyLimiter(policy)?.limit),
      );
    meter
      .createObservableGauge(MetricNames.inflight, {
        ...int,
        unit: '{call}',
        description: 'Calls holding a slot of the concurrency limit now.',
      })
      .addCallback((result) =>
        this.observeOwn(result, (policy) => concurrencyLimiter(policy)?.inflight),
      );
  }

  /** The attribute sets of (policy, host, service), shared by every observer of this meter. */
  setsOf(policy: string, host: string | undefined, service: string | undefined): AttributeSets {
    const key = JSON.stringify([policy, host, service]);
    let sets = this.sets.get(key);
    if (sets === undefined)
      this.sets.set(key, (sets = new AttributeSets(policy, host, service, this)));
    return sets;
  }

  /** The attribute sets of (policy, host, service) if they are held now, else `undefined` (nothing is created). */
  peekSets(
    policy: string,
    host: string | undefined,
    service: string | undefined,
  ): AttributeSets | undefined {
    return this.sets.get(JSON.stringify([policy, host, service]));
  }

  /**
   * Lets go of `holder` (a key's `dependency` label) for `sets`; when no key records through them any
   * more, the sets and their call and attempt tallies are dropped, so the series of the calls and
   * attempts counters (and the attribute sets the duration histogram and the other counters record
   * with) stay bounded by the keys the scopes hold. A key that returns starts its series from 0.
   */
  release(sets: AttributeSets, holder: object): void {
    if (!sets.holders.delete(holder) || sets.holders.size > 0) return;
    const key = JSON.stringify([
      sets.policy,
      sets.base[TelemetryAttributes.host],
      sets.base[TelemetryAttributes.service],
    ]);
    if (this.sets.get(key) === sets) this.sets.delete(key);
    for (const tally of sets.tallies) {
      const tallyKey = JSON.stringify(tally.attributes);
      if (this.calls.get(tallyKey) === tally) this.calls.delete(tallyKey);
      if (this.attempts.get(tallyKey) === tally) this.attempts.delete(tallyKey);
    }
  }

  /** The shared calls tally of `attributes` (one per distinct attribute set). */
  callTally(attributes: Attributes): Tally {
    return tallyOf(this.calls, attributes);
  }

  /** The shared attempts tally of `attributes`. */
  attemptTally(attributes: Attributes): Tally {
    return tallyOf(this.attempts, attributes);
  }

  /**
   * Makes the gauges report `policy`, replacing an earlier instance of the same name, host and service
   * (so what is held is bounded by the distinct names, and is the instance that actually runs).
   */
  observe(policy: ExecutablePolicy, attributes: Attributes): void {
    if (policy.name === '') return;
    this.observed.set(JSON.stringify(attributes), { policy, attributes });
  }

  /**
   * Stops the gauges reporting `policy` (evicted from its scope), unless another key's instance
   * replaced it already. An earlier instance of the same key (one its scope replaced when new
   * settings came, sharing the key's `dependency` label and state) counts as `policy`.
   */
  unobserve(policy: ExecutablePolicy, attributes: Attributes): void {
    const key = JSON.stringify(attributes);
    const observed = this.observed.get(key)?.policy;
    if (
      observed === policy ||
      (observed !== undefined &&
        policy.dependency !== undefined &&
        observed.dependency === policy.dependency)
    )
      this.observed.delete(key);
  }

  /**
   * Reports `read` of every observed instance. A name's own series (an instance standing for no host
   * or service) reports the largest of its own reading and those of the name's keyed instances (its
   * hosts, its services): the worst breaker state, the most spent budget, as the health indicator's
   * entry for the name does.
   */
  private observeOwn(
    result: ObservableResult,
    read: (policy: ExecutablePolicy) => number | undefined,
  ): void {
    observeOwnReadings(this.observed.values(), result, read);
  }

  private observeEach(
    result: ObservableResult,
    read: (policy: ExecutablePolicy) => number | undefined,
  ): void {
    let worst: Map<string, number> | undefined;
    for (const { policy } of this.observed.values()) {
      if (policy.dependency === undefined) continue;
      const value = read(policy);
      if (value === undefined) continue;
      worst ??= new Map();
      const seen = worst.get(policy.name);
      if (seen === undefined || value > seen) worst.set(policy.name, value);
    }
    for (const { policy, attributes } of this.observed.values()) {
      let value = read(policy);
      if (policy.dependency === undefined && worst !== undefined) {
        const keys = worst.get(policy.name);
        if (keys !== undefined && (value === undefined || keys > value)) value = keys;
      }
      if (value !== undefined) result.observe(value, attributes);
    }
  }
}

/**
 * Reports `read` of every observed instance for itself (a limit and its slots belong to one
 * instance: the worst of several means nothing). A name's own series is left out while its keyed
 * instances (hosts, services) report theirs: its calls run through them, not through its own limiter.
 */
function observeOwnReadings(
  observed: Iterable<Observed>,
  result: ObservableResult,
  read: (policy: ExecutablePolicy) => number | undefined,
): void {
  let keyed: Set<string> | undefined;
  const readings: [number, Observed][] = [];
  for (const entry of observed) {
    const value = read(entry.policy);
    if (value === undefined) continue;
    readings.push([value, entry]);
    if (entry.policy.dependency !== undefined) (keyed ??= new Set()).add(entry.policy.name);
  }
  for (const [value, { policy, attributes }] of readings) {
    if (policy.dependency === undefined && keyed?.has(policy.name) === true) continue;
    result.observe(value, attributes);
  }
}

function tallyOf(tallies: Map<string, Tally>, attributes: Attributes): Tally {
  const key = JSON.stringify(attributes);
  let tally = tallies.get(key);
  if (tally === undefined) {
    tally = new Tally(Object.freeze(attributes));
    tallies.set(key, tally);
  }
  return tally;
}

/** The policy's concurrency limiter, if its `limit` is one (a rate limit has no slots to gauge); never creates one for a policy without a limit. */
function concurrencyLimiter(policy: ExecutablePolicy): ConcurrencyLimiter | undefined {
  if (policy.options.limit === undefined) return undefined;
  const limiter = policy.limiter();
  return limiter instanceof ConcurrencyLimiter ? limiter : undefined;
}
