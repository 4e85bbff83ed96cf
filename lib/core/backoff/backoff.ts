import { PolicyConfigError } from '../errors.js';
import { MULTIPLIER_RULE, DELAY_RULE } from '../rules/option-rules.js';
import { checkOptions, checkValue, given } from '../rules/value-rule.js';
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
