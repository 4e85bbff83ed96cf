import { PolicyConfigError } from '../errors.js';
import { MULTIPLIER_RULE, DELAY_RULE } from '../rules/option-rules.js';
import { checkOptions, checkValue, given, numberRule } from '../rules/value-rule.js';
import { Jitter, jitterNamed } from './jitter.js';
import type { Verdict } from '../classification/verdict.js';

/** What a backoff curve is told about the retry it is timing. */
export interface BackoffInput {
  /**
   * The attempt about to start (2 for the first retry). Retry number n = attempt - 1. Counted from
   * the last server pushback: after a retry timed by pushback, the next computed delay is the first
   * retry's again (gRFC A6), so this is then 2 again.
   */
  readonly attempt: number;
  /** Verdict of the attempt that just failed. */
  readonly verdict: Verdict;
  /** Error of the attempt that just failed, if it threw. */
  readonly error: unknown;
  /** Milliseconds left before the call's deadline (Infinity without one). */
  readonly remaining: number;
  /** The caller's signal, if any. */
  readonly signal: AbortSignal | undefined;
  /** Uniform [0, 1) source used for jitter (the policy's `random`). */
  readonly random: () => number;
  /**
   * The dependency's measured latency, when the policy measures it (`Backoff.measured` or an
   * `attemptCeiling`, and `adaptive` not false): the `quantile` (in (0, 1)) of successful attempt
   * durations over the last 5 minutes, ms, or `undefined` while fewer than 20 were seen.
   * `undefined` (the property) when the policy measures nothing.
   */
  readonly latency?: (quantile: number) => number | undefined;
}

/** A backoff curve: the delay in ms before a retry. Results are finite and within [0, maximumDelay]. */
export interface Backoff {
  /** Upper bound of every delay this curve returns, in ms; server pushback is capped by it too. */
  readonly maximumDelay: number;
  /** Delay before the attempt described by `next`, in ms. */
  compute(next: BackoffInput): number;
}

/** Options of {@link Backoff.exponential}; durations in ms. */
export interface ExponentialBackoffOptions {
  /** Base for Transient failures. Default 100. */
  transientBase?: number;
  /** Base for Throttled failures without pushback (the dependency asked us to slow down). Default 1000. */
  throttledBase?: number;
  /** Growth per retry, >= 1. Default 2. */
  factor?: number;
  /** Cap of any delay. Default 30000. */
  maximumDelay?: number;
  /** Jitter applied after capping. Default {@link Jitter.full}. */
  jitter?: Jitter | 'full' | 'equal' | 'none';
}

/** Computes min(max, base × factor^(n-1)) without overflow: the exponent is cut once it passes the cap. */
function capped(base: number, factor: number, retry: number, maximum: number): number {
  if (base >= maximum) return maximum;
  if (factor <= 1) return Math.min(base, maximum);
  // Steps needed for base × factor^k to reach the cap; beyond it the result is the cap.
  const steps = Math.log(maximum / base) / Math.log(factor);
  const exponent = retry - 1;
  if (!(exponent < steps)) return maximum;
  return Math.min(maximum, base * factor ** exponent);
}

/** The exponential curve's options; `jitter` (a name or a function) is checked where it is read. */
const EXPONENTIAL_RULES = {
  transientBase: DELAY_RULE,
  throttledBase: DELAY_RULE,
  maximumDelay: DELAY_RULE,
  factor: MULTIPLIER_RULE,
  jitter: null,
};

class ExponentialBackoff implements Backoff {
  readonly transientBase: number;
  readonly throttledBase: number;
  readonly factor: number;
  readonly maximumDelay: number;
  readonly jitter: Jitter;

  constructor(options: ExponentialBackoffOptions) {
    checkOptions(options, EXPONENTIAL_RULES, 'backoff', 'option');
    this.transientBase = given(options.transientBase, 100);
    this.throttledBase = given(options.throttledBase, 1000);
    this.maximumDelay = given(options.maximumDelay, 30_000);
    this.factor = given(options.factor, 2);
    const jitter =
      typeof options.jitter === 'string'
        ? jitterNamed(options.jitter)
        : given<unknown>(options.jitter, Jitter.full);
    if (typeof jitter !== 'function') {
      throw new PolicyConfigError(
        'backoff.jitter',
        options.jitter,
        "must be 'full', 'equal', 'none' or a Jitter function",
      );
    }
    this.jitter = jitter as Jitter;
  }

  compute(next: BackoffInput): number {
    const base = next.verdict.kind === 'Throttled' ? this.throttledBase : this.transientBase;
    const delay = capped(base, this.factor, Math.max(1, next.attempt - 1), this.maximumDelay);
    return clamp(this.jitter(delay, next.random), this.maximumDelay);
  }
}

/** Options of {@link Backoff.measured}: the exponential curve's, and how its transient base is measured. */
export interface MeasuredBackoffOptions extends ExponentialBackoffOptions {
  /** The measured base as a multiple of the latency quantile, a finite number > 0. Default 1. */
  multiple?: number;
  /** The quantile of successful attempt durations, in (0, 0.5]. Default 0.5 (the median). */
  quantile?: number;
  /**
   * How far the measured base may move from the written `transientBase`, either way: it stays in
   * [transientBase / spread, transientBase × spread] (and at most `maximumDelay`). A finite number
   * >= 1. Default 10.
   */
  spread?: number;
}

/**
 * Rules of `Backoff.measured`'s own options (`multiple`, `quantile`, `spread`), each written once (code and config).
 * @internal
 */
export const MEASURED_BACKOFF_RULES = {
  multiple: numberRule('must be a finite number > 0', (v) => v > 0),
  quantile: numberRule('must be a number in (0, 0.5]', (v) => v > 0 && v <= 0.5),
  spread: MULTIPLIER_RULE,
} as const;

const MEASURED_RULES = { ...EXPONENTIAL_RULES, ...MEASURED_BACKOFF_RULES };

/** The exponential curve with its transient base measured (DESIGN §3.4); see {@link Backoff.measured}. */
export class MeasuredBackoff implements Backoff {
  /** The written transient base, ms: where the measured base starts and what it stays within `spread` of. */
  readonly transientBase: number;
  /** Base after a Throttled failure without pushback, ms (never measured). */
  readonly throttledBase: number;
  /** Growth per retry. */
  readonly factor: number;
  /** Cap of every delay, ms. */
  readonly maximumDelay: number;
  /** Jitter applied after capping. */
  readonly jitter: Jitter;
  /** The measured base as a multiple of the latency quantile. */
  readonly multiple: number;
  /** The quantile of successful attempt durations the base is read from, in (0, 0.5]. */
  readonly quantile: number;
  /** The measured base stays within this factor of `transientBase`, either way. */
  readonly spread: number;

  /**
   * @param options see {@link MeasuredBackoffOptions}
   * @param state the measurement state this curve always reads (the config layer pins one to a
   *   policy name, so a reload keeps what was measured); `undefined` = each policy instance its own
   * @throws PolicyConfigError naming `backoff.<field>`, the value and the rule
   */
  constructor(
    /** The options it was made with. */
    readonly options: MeasuredBackoffOptions,
    /** The pinned measurement state, or `undefined` (see the constructor). */
    readonly state: object | undefined = undefined,
  ) {
    checkOptions(options, MEASURED_RULES, 'backoff', 'option');
    const { multiple, quantile, spread, ...written } = options;
    const curve = new ExponentialBackoff(written);
    this.transientBase = curve.transientBase;
    this.throttledBase = curve.throttledBase;
    this.factor = curve.factor;
    this.maximumDelay = curve.maximumDelay;
    this.jitter = curve.jitter;
    this.multiple = given(multiple, 1);
    this.quantile = given(quantile, 0.5);
    this.spread = given(spread, 10);
  }

  /** The same curve, always reading the measurement state `state` (see the constructor). */
  using(state: object): MeasuredBackoff {
    return new MeasuredBackoff(this.options, state);
  }

  /**
   * The transient base from a latency reading: `multiple` × the quantile, within `spread` of the
   * written base and at most `maximumDelay`; the written base while the reading is cold or absent.
   * @param latency the policy's reading (see {@link BackoffInput.latency})
   */
  measuredBase(latency: ((quantile: number) => number | undefined) | undefined): number {
    const written = this.transientBase;
    const reading = latency?.(this.quantile);
    if (reading === undefined || !(reading >= 0)) return written;
    const lowest = written / this.spread;
    const highest = Math.min(written * this.spread, this.maximumDelay);
    const base = this.multiple * reading;
    return base < lowest ? lowest : base > highest ? highest : base;
  }

  /** Delay before the attempt described by `next`, in ms: the exponential curve from the measured base. */
  compute(next: BackoffInput): number {
    const base =
      next.verdict.kind === 'Throttled' ? this.throttledBase : this.measuredBase(next.latency);
    const delay = capped(base, this.factor, Math.max(1, next.attempt - 1), this.maximumDelay);
    return clamp(this.jitter(delay, next.random), this.maximumDelay);
  }
}

class ConstantBackoff implements Backoff {
  readonly maximumDelay: number;
  constructor(readonly delay: number) {
    this.maximumDelay = checkValue(DELAY_RULE, 'backoff.delay', delay);
  }
  compute(): number {
    return this.delay;
  }
}

class CustomBackoff implements Backoff {
  constructor(
    private readonly curve: (next: BackoffInput) => number,
    readonly maximumDelay: number,
  ) {
    if (typeof curve !== 'function')
      throw new PolicyConfigError('backoff', curve, 'Backoff.custom needs a function');
    checkValue(DELAY_RULE, 'backoff.maximumDelay', maximumDelay);
  }
  compute(next: BackoffInput): number {
    return clamp(this.curve(next), this.maximumDelay);
  }
}

/** Backoff curves (DESIGN §3.4). */
export const Backoff = {
  /**
   * Exponential: delay for retry n = min(maximumDelay, base × factor^(n-1)), then jitter. The base is
   * `throttledBase` after a Throttled verdict, else `transientBase`. Defaults: 100 / 1000 ms, factor 2,
   * maximum 30 s, full jitter.
   * @throws PolicyConfigError for negative durations, factor < 1, unknown jitter or unknown keys.
   */
  exponential(options: ExponentialBackoffOptions = {}): Backoff {
    return new ExponentialBackoff(options);
  },
  /**
   * Exponential, its transient base measured from the dependency (DESIGN §3.4): `multiple` (1) × the
   * `quantile` (0.5) of successful attempt durations over the last 5 minutes, once 20 were seen,
   * kept within `spread` (10) either side of the written `transientBase` (100 ms) and at most
   * `maximumDelay`; the written base until then, and always with `adaptive: false`. Throttled
   * failures keep `throttledBase`. The other options are {@link Backoff.exponential}'s.
   * @throws PolicyConfigError naming `backoff.<field>`, the value and the rule
   */
  measured(options: MeasuredBackoffOptions = {}): MeasuredBackoff {
    return new MeasuredBackoff(options);
  },
  /** The same delay (ms) before every retry. @throws PolicyConfigError for a negative or non-finite delay. */
  constant(delay: number): Backoff {
    return new ConstantBackoff(delay);
  },
  /** Retry at once. */
  none: new ConstantBackoff(0) as Backoff,
  /**
   * Your own curve; its result is clamped to [0, maximumDelay] and NaN counts as 0.
   * @param maximumDelay cap in ms (default 30000).
   */
  custom(curve: (next: BackoffInput) => number, maximumDelay = 30_000): Backoff {
    return new CustomBackoff(curve, maximumDelay);
  },
} as const;

/** The default curve: exponential, full jitter, 100 ms transient base, 1 s throttled base, 30 s cap. */
export const defaultBackoff: Backoff = Backoff.exponential();

function clamp(delay: number, maximum: number): number {
  if (!(delay > 0)) return 0;
  return delay > maximum ? maximum : delay;
}
