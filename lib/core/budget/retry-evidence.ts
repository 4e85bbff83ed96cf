import type { Verdict } from '../classification/verdict.js';
import { AttemptTimeoutError } from '../errors.js';

/**
 * What the evidence says retries are doing now (DESIGN §3.5), from the most to the least generous
 * funding an {@link AdaptiveTokenBucket} gives them:
 * - `working`: retries succeed about as often as first attempts, and the dependency shows no strain;
 * - `strained`: retries succeed, but the dependency is slower than its baseline or pushing back;
 * - `failing`: retries mostly fail, or first attempts just fell suddenly (before 100 retries were
 *   seen, only below half the working thresholds; between half and the full ones, `strained`).
 * Until 20 retries were seen the evidence says `strained` (the static bucket: no credit, no ticket).
 */
export type RetryRegime = 'working' | 'strained' | 'failing';

/** Retries must succeed at least this often to be "working" (a success re-funds 2.5 tokens: break-even). */
export const WORKING_EFFECTIVENESS = 0.4;
/** …and at least this share of the first-attempt success rate (retries failing more than first attempts is the storm's signature). */
const RELATIVE_EFFECTIVENESS = 0.7;
/** Points the recent first-attempt success rate must fall below the long view to count as a sudden fall. */
const SUDDEN_FALL = 0.2;
/** Points the recent first-attempt success rate must rise above the long view to count as a recovery. */
const RECOVERY_RISE = 0.1;
/** Attempts the recent and the long first-attempt views average over. */
const RECENT_ATTEMPTS = 100;
const LONG_ATTEMPTS = 1000;
/** Retries the effectiveness and push-back shares average over. */
const RETRY_HORIZON = 100;
/** Timed successful attempts the recent latency averages over. */
const LATENCY_HORIZON = 50;
/** Timed successful attempts the latency baseline averages over while the dependency is not slow… */
const BASELINE_HORIZON = 1000;
/** …and while it is: a lasting change of pace becomes the norm only slowly (minutes at hundreds of calls/s). */
const SLOW_BASELINE_HORIZON = 100_000;
/** Retries seen before the evidence says anything but `strained`. */
const WARM_UP_RETRIES = 20;
/** Timed successes the baseline needs before latency is evidence. */
const WARM_UP_SAMPLES = 20;
/** Recent successes slower than this multiple of the baseline are strain. */
const LATENCY_STRAIN = 2;
/** The baseline learns at its normal pace only while recent successes are within this multiple of it. */
const LATENCY_STEADY = 1.5;
/** A larger share of retries answered Throttled or by an attempt timeout is strain. */
const PUSHBACK_STRAIN = 0.25;

/** Moves an average over `horizon` samples towards `x`; the first samples are a plain mean (no start-up bias). */
function average(previous: number, x: number, seen: number, horizon: number): number {
  return previous + (x - previous) / (seen < horizon ? seen : horizon);
}

/**
 * The evidence an adaptive retry budget weighs, from every attempt the executor records
 * (`RetryBudgetState.recordAttempt`): exponentially weighted averages over counts of attempts, not
 * time, so they mean the same at 2 and at 2 000 calls per second. O(1) memory and time per attempt.
 * - retry effectiveness: the share of retries that succeed (over about 100 retries);
 * - first-attempt success over the recent 100 and the long 1000 first attempts (a sudden fall of
 *   20 points means the dependency just broke: what retries did before no longer tells; a rise of
 *   10 points means it recovered, and the retries' evidence starts again);
 * - strain: recent successful attempts (over about 50; retries, and first attempts when the executor
 *   times them) slower than 2 × the baseline latency of successful attempts, or more than 25 % of
 *   retries answered `Throttled` or ended by the attempt timeout. The baseline (about 1000
 *   successes) learns only while recent successes are within 1.5× of it and first attempts did not
 *   just fall; otherwise it drifts 100 times slower, so a lasting change of pace becomes the norm after minutes, a brownout not.
 * `Limited` (this process refused itself) and `Permanent` outcomes are not evidence.
 */
export class RetryEvidence {
  private retries = 0;
  private effectiveness = 0;
  private pushback = 0;
  private firsts = 0;
  private recentFirst = 0;
  private longFirst = 0;
  private recentSamples = 0;
  private recentLatency = 0;
  private samples = 0;
  private baseline = 0;

  /**
   * Weighs one attempt's outcome.
   * @param attempt 1 for a first attempt, 2 and up for retries
   * @param verdict the attempt's verdict
   * @param duration its duration in ms, 0 when nothing timed it (then it is no latency evidence)
   * @param error what it threw, `undefined` when it returned a value
   */
  record(attempt: number, verdict: Verdict, duration: number, error: unknown): void {
    const kind = verdict.kind;
    if (kind === 'Limited' || kind === 'Permanent') return;
    const ok = kind === 'Ok' ? 1 : 0;
    if (attempt === 1) {
      const n = ++this.firsts;
      this.recentFirst = average(this.recentFirst, ok, n, RECENT_ATTEMPTS);
      this.longFirst = average(this.longFirst, ok, n, LONG_ATTEMPTS);
      // A sudden rise (the dependency recovered): what retries did before no longer tells; their
      // evidence starts again (the static bucket meanwhile), rather than holding the budget at
      // `failing` for as long as the rare retries of a healthy dependency take to outweigh it.
      if (this.recentFirst - this.longFirst >= RECOVERY_RISE) this.retries = 0;
    } else {
      const n = ++this.retries;
      this.effectiveness = average(this.effectiveness, ok, n, RETRY_HORIZON);
      this.pushback = average(
        this.pushback,
        kind === 'Throttled' || error instanceof AttemptTimeoutError ? 1 : 0,
        n,
        RETRY_HORIZON,
      );
    }
    if (ok === 0 || duration <= 0) return;
    this.recentLatency = average(
      this.recentLatency,
      duration,
      ++this.recentSamples,
      LATENCY_HORIZON,
    );
    // A brownout must not become the norm: unless recent successes are near the baseline (and first
    // attempts did not just fall) it barely moves; the gap between 1.5× and 2× keeps a slow
    // dependency from dragging its own baseline up until it no longer looks slow.
    const steady =
      this.samples < WARM_UP_SAMPLES ||
      (this.recentLatency <= LATENCY_STEADY * this.baseline && !this.suddenFall);
    const seen = ++this.samples;
    this.baseline +=
      (duration - this.baseline) /
      (steady ? (seen < BASELINE_HORIZON ? seen : BASELINE_HORIZON) : SLOW_BASELINE_HORIZON);
  }

  /** Share of retries that succeed (0..1, over about the last 100 retries). */
  get retryEffectiveness(): number {
    return this.effectiveness;
  }

  /** Share of first attempts that succeed over about the last 100 first attempts. */
  get recentFirstAttemptSuccess(): number {
    return this.recentFirst;
  }

  /** Share of first attempts that succeed over about the last 1000 first attempts. */
  get firstAttemptSuccess(): number {
    return this.longFirst;
  }

  /** Baseline latency (ms) of successful attempts while the dependency was not slow; 0 before any was timed. */
  get latencyBaseline(): number {
    return this.baseline;
  }

  /** True when first attempts just fell 20 points or more below their long view. */
  get suddenFall(): boolean {
    return this.longFirst - this.recentFirst >= SUDDEN_FALL;
  }

  /** True when the dependency shows strain: slow successful retries, or retries pushed back or timed out. */
  get strained(): boolean {
    return this.slow || (this.retries >= WARM_UP_RETRIES && this.pushback > PUSHBACK_STRAIN);
  }

  /** What the evidence says now (see {@link RetryRegime}). */
  get regime(): RetryRegime {
    // Too few retries seen to tell: the static bucket, as a budget that weighs nothing would be.
    if (this.retries < WARM_UP_RETRIES) return 'strained';
    if (this.suddenFall) return 'failing';
    const effectiveness = this.effectiveness;
    const first = RELATIVE_EFFECTIVENESS * this.longFirst;
    // Until 100 retries the average is a noisy plain mean: only half the thresholds say `failing`
    // (a dead dependency's 0 % does at once); between half and the full ones, the static bucket.
    const margin = this.retries < RETRY_HORIZON ? 0.5 : 1;
    if (effectiveness < margin * WORKING_EFFECTIVENESS || effectiveness < margin * first)
      return 'failing';
    if (effectiveness < WORKING_EFFECTIVENESS || effectiveness < first) return 'strained';
    return this.strained ? 'strained' : 'working';
  }

  /** Recent latency (ms) of timed successful attempts (retries, and first attempts when the executor timed them). */
  get recentSuccessLatency(): number {
    return this.recentLatency;
  }

  private get slow(): boolean {
    return this.samples >= WARM_UP_SAMPLES && this.recentLatency > LATENCY_STRAIN * this.baseline;
  }
}
