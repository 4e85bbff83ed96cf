import { MeasuredBackoff } from '../backoff/backoff.js';
import { describeBackoff } from '../backoff/describe-backoff.js';
import { CEILING_WARM_SAMPLES, MEASURED_WARM_SAMPLES } from '../estimators/measured-latency.js';
import type { ExecutablePolicy } from '../execution/executable-policy.js';

/**
 * How far a term's live reading can be trusted: `warm` (in force, with what it needs: a constant, a
 * bucket, a breaker or estimator that has seen traffic), `cold` (configured, but its reading has
 * nothing to go on yet: no attempts seen, an estimator not armed), `not configured` (off).
 */
export type ReadingState = 'warm' | 'cold' | 'not configured';

/** One term of a policy as {@link PolicyExplanation} shows it. */
export interface ExplainedTerm {
  /** The option it is (`attempts`, `budget`, `breaker`, …). */
  readonly term: string;
  /** What the configuration says, in words with units (ms, tokens). */
  readonly configured: string;
  /** What the live state reads now (`''` when the term has nothing live). */
  readonly reading: string;
  readonly state: ReadingState;
}

/**
 * A policy's configuration beside its live readings (DESIGN §3.8), as `policy.explain()` returns it:
 * `terms` in a fixed order, `toString()` one line per term (`  term  configured — reading [state]`,
 * or `  term  not configured`),
 * and for a keyed family the summary of each key (`keys`).
 */
export class PolicyExplanation {
  /**
   * @param policy the policy's name (`''` when unnamed)
   * @param terms the terms, in the order printed
   * @param keys per-key summaries of a keyed family (one line each), `[]` for a single instance
   */
  constructor(
    readonly policy: string,
    readonly terms: readonly ExplainedTerm[],
    readonly keys: readonly string[] = [],
  ) {}

  /** The term named `term`, or `undefined`. */
  term(term: string): ExplainedTerm | undefined {
    return this.terms.find((t) => t.term === term);
  }

  /** The explanation as text: the name, one line per term, then the keys. */
  toString(): string {
    const width = Math.max(...this.terms.map((t) => t.term.length));
    const lines = [`policy ${this.policy === '' ? '(unnamed)' : this.policy}`];
    for (const t of this.terms) {
      const text =
        t.state === 'not configured'
          ? t.state
          : `${t.configured}${t.reading === '' ? '' : ` — ${t.reading}`} [${t.state}]`;
      lines.push(`  ${t.term.padEnd(width)}  ${text}`);
    }
    if (this.keys.length > 0) {
      lines.push(`  keys (${this.keys.length})`);
      for (const key of this.keys) lines.push(`    ${key}`);
    }
    return lines.join('\n');
  }
}

const OFF = 'not configured';

/**
 * Explains `policy`: each term's configuration and live reading. Reading the budget, breaker and
 * limiter resolves them for the instance, as its first call would.
 * @param keys per-key summary lines of a keyed family, see {@link PolicyExplanation}
 */
export function explainPolicy(
  policy: ExecutablePolicy,
  keys: readonly string[] = [],
): PolicyExplanation {
  const o = policy.options;
  const terms: ExplainedTerm[] = [
    {
      term: 'attempts',
      configured: `${o.attempts} in total (${o.attempts - 1} ${o.attempts === 2 ? 'retry' : 'retries'})`,
      reading: '',
      state: 'warm',
    },
    o.deadline === undefined
      ? { term: 'deadline', configured: OFF, reading: '', state: OFF }
      : {
          term: 'deadline',
          configured: `${o.deadline} ms for the whole call (attempts, backoff, pauses)`,
          reading: '',
          state: 'warm',
        },
    o.attemptTimeout === undefined
      ? { term: 'attemptTimeout', configured: OFF, reading: '', state: OFF }
      : {
          term: 'attemptTimeout',
          configured: `${o.attemptTimeout} ms per attempt (a stream: to its first element, then each silence)`,
          reading: '',
          state: 'warm',
        },
    backoffTerm(policy),
    budgetTerm(policy),
    breakerTerm(policy),
    limitTerm(policy),
    hedgeTerm(policy),
    ceilingTerm(policy),
    saturationTerm(policy),
    {
      term: 'restarts',
      configured: `${o.restarts} re-opens of a checkpointed stream`,
      reading: '',
      state: 'warm',
    },
  ];
  return new PolicyExplanation(o.name, terms, keys);
}

function backoffTerm(policy: ExecutablePolicy): ExplainedTerm {
  const configured = backoffText(policy);
  const backoff = policy.options.backoff;
  if (!(backoff instanceof MeasuredBackoff))
    return { term: 'backoff', configured, reading: '', state: 'warm' };
  const measured = policy.measurements();
  if (measured === undefined)
    return {
      term: 'backoff',
      configured,
      reading: 'written base (adaptive: false)',
      state: 'warm',
    };
  const now = policy.options.clock.now();
  const reading = measured.quantile(now, backoff.quantile);
  return reading === undefined
    ? {
        term: 'backoff',
        configured,
        reading: `written base until ${MEASURED_WARM_SAMPLES} successes are seen (${measured.samples(now)} so far)`,
        state: 'cold',
      }
    : {
        term: 'backoff',
        configured,
        reading: `base ${round(backoff.measuredBase(() => reading))} ms (p${round(backoff.quantile * 100)} ${round(reading)} ms)`,
        state: 'warm',
      };
}

function backoffText(policy: ExecutablePolicy): string {
  const b = describeBackoff(policy.options.backoff);
  switch (b.type) {
    case 'measured':
      return `exponential from a measured base: ${b.multiple} × the p${round(b.quantile * 100)} of successful attempts over 5 min, within ×${b.spread} of ${b.transientBase} ms (throttled ${b.throttledBase} ms) ×${b.factor} per retry, at most ${b.maximumDelay} ms, ${b.jitter} jitter`;
    case 'none':
      return 'none: retries at once';
    case 'constant':
      return `constant ${b.delay} ms`;
    case 'exponential':
      return `exponential from ${b.transientBase} ms (throttled ${b.throttledBase} ms) ×${b.factor} per retry, at most ${b.maximumDelay} ms, ${b.jitter} jitter`;
    default:
      return `custom, at most ${b.maximumDelay} ms`;
  }
}

function budgetTerm(policy: ExecutablePolicy): ExplainedTerm {
  const bucket = policy.bucket();
  if (bucket === undefined) return { term: 'budget', configured: OFF, reading: '', state: OFF };
  const level = Math.round(bucket.level * 10) / 10;
  const spent = Math.round(bucket.utilization * 100);
  return {
    term: 'budget',
    configured: `retries funded from ${round(bucket.capacity)} tokens`,
    reading: `${level} tokens left (${spent} % spent)`,
    state: 'warm',
  };
}

function breakerTerm(policy: ExecutablePolicy): ExplainedTerm {
  const breaker = policy.breaker();
  if (breaker === undefined) return { term: 'breaker', configured: OFF, reading: '', state: OFF };
  const s = breaker.settings;
  const snapshot = breaker.snapshot();
  // A streak significance of 1 takes the run literally; below it, the run lengthens with the error rate seen.
  const run =
    s.streakSignificance >= 1
      ? `${s.consecutiveFailures} consecutive Transient failures`
      : `a run of Transient failures improbable at the error rate seen (${s.consecutiveFailures} from cold)`;
  const floor =
    s.failureRateFloor > 0
      ? `, never while ≥ ${Math.round(s.failureRateFloor * 100)} % of recent attempts succeeded`
      : '';
  const configured = `trips on ${run}${floor}; breaks of ${s.breakDuration} ms`;
  const reading = `${snapshot.state}; ${snapshot.tripWindowFailures} of ${snapshot.tripWindowCalls} attempts failed in the trip window, a run of ${snapshot.consecutiveFailures}`;
  return {
    term: 'breaker',
    configured,
    reading,
    state: snapshot.tripWindowCalls > 0 || snapshot.state !== 'closed' ? 'warm' : 'cold',
  };
}

function limitTerm(policy: ExecutablePolicy): ExplainedTerm {
  const limiter = policy.options.limit === undefined ? undefined : policy.limiter();
  if (limiter === undefined) return { term: 'limit', configured: OFF, reading: '', state: OFF };
  const l = limiter.snapshot();
  if (l.kind === 'rate') {
    const store =
      l.shared === undefined
        ? ''
        : `, shared through ${l.shared.store} (${l.shared.degraded ? 'degraded: on the local share' : l.shared.state})`;
    return {
      term: 'limit',
      configured: `rate, ${l.limit} per ${l.per} ms, burst ${l.burst}${store}`,
      reading: `${l.available} tokens now, ${l.granted} granted, ${l.refused} refused`,
      state: 'warm',
    };
  }
  const reading = `limit ${l.limit}, ${l.inflight} in flight, ${l.queued} queued`;
  const cold = l.kind === 'adaptive' && l.noLoadLatency === undefined;
  return {
    term: 'limit',
    configured: `${l.kind}, queue of ${l.queue}`,
    reading: cold ? `${reading} (no latency measured yet)` : reading,
    state: cold ? 'cold' : 'warm',
  };
}

function hedgeTerm(policy: ExecutablePolicy): ExplainedTerm {
  const hedger = policy.options.hedge === undefined ? undefined : policy.hedger();
  if (hedger === undefined) return { term: 'hedge', configured: OFF, reading: '', state: OFF };
  const s = hedger.settings;
  const threshold = hedger.threshold(policy.options.clock.now());
  const configured = `a second attempt after the p${round(s.quantile * 100)} of recent latency, at most ${s.maximumConcurrent} at once`;
  return threshold === undefined
    ? {
        term: 'hedge',
        configured,
        reading: 'threshold not armed (fewer than 20 successes seen)',
        state: 'cold',
      }
    : { term: 'hedge', configured, reading: `threshold ${round(threshold)} ms`, state: 'warm' };
}

function ceilingTerm(policy: ExecutablePolicy): ExplainedTerm {
  const o = policy.options;
  const settings = o.attemptCeiling?.settings;
  const measured = policy.measurements();
  if (settings === undefined || measured === undefined)
    return { term: 'attemptCeiling', configured: OFF, reading: '', state: OFF };
  const configured = `${settings.multiple} × the p${round(settings.quantile * 100)} of successful attempts over 5 min, when shorter than the attempt's bound`;
  const now = o.clock.now();
  const ceiling = measured.ceiling(now, settings.multiple, settings.quantile);
  if (ceiling === undefined)
    return {
      term: 'attemptCeiling',
      configured,
      reading: `not armed (${measured.samples(now)} of ${CEILING_WARM_SAMPLES} successes seen)`,
      state: 'cold',
    };
  const share = `${round(measured.outlastedShare * 100)} % of recent attempts outlasted it`;
  return {
    term: 'attemptCeiling',
    configured,
    reading: measured.standsAside
      ? `standing aside at ${round(ceiling)} ms: ${share}`
      : `ceiling ${round(ceiling)} ms (${share})`,
    state: 'warm',
  };
}

function saturationTerm(policy: ExecutablePolicy): ExplainedTerm {
  const saturation = policy.options.saturation;
  if (saturation === undefined)
    return { term: 'saturation', configured: OFF, reading: '', state: OFF };
  const configured = `measured terms stop learning while the event loop's delay is above ${saturation.multiple} × its normal (and 20 ms)`;
  const probe = saturation.probe;
  const normal = probe.normal;
  return normal === undefined
    ? { term: 'saturation', configured, reading: 'no reading yet', state: 'cold' }
    : {
        term: 'saturation',
        configured,
        reading: `delay ${round(probe.delay)} ms, normal ${round(normal)} ms${saturation.saturated ? ': saturated' : ''}`,
        state: 'warm',
      };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
