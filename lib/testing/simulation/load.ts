import { PolicyConfigError } from '../../core/index.js';
import { checkValue, DELAY_RULE } from '../../core/internal.js';

/** How arrivals are spaced within a rate: `even` (deterministic, 1000 / perSecond ms apart) or `poisson` (seeded exponential gaps). */
export type ArrivalProcess = 'even' | 'poisson';

/** One step of {@link Load.steps}: from `at` ms on, `perSecond` calls per second. */
export interface LoadStep {
  /** Start of the step in ms from the start of the run, >= 0. Steps must be in increasing order. */
  readonly at: number;
  /** Calls per second from `at` until the next step, a finite number >= 0. */
  readonly perSecond: number;
}

/** Options of {@link Load.constant}. */
export interface ConstantLoadOptions {
  /** Calls per second, a finite number >= 0. */
  readonly perSecond: number;
  /** Arrival spacing (default `'even'`). */
  readonly arrivals?: ArrivalProcess;
}

/** Options of {@link Load.steps}. */
export interface StepLoadOptions {
  /** Arrival spacing (default `'even'`). */
  readonly arrivals?: ArrivalProcess;
}

/**
 * The traffic a simulation offers the policy: calls per second over time (DESIGN §8). A value; each
 * run draws its own arrivals from it.
 *
 * - `even` arrivals (default) are deterministic: the k-th call of a step arrives at
 *   `at + k × 1000 / perSecond` ms (computed by multiplication, so no drift accumulates).
 * - `poisson` arrivals have exponential gaps with mean `1000 / perSecond` ms, drawn from the run's
 *   seeded random source; a gap crossing a step boundary restarts at the boundary with the new rate.
 *
 * ```ts
 * Load.constant({ perSecond: 500 });
 * Load.steps([{ at: 0, perSecond: 100 }, { at: 60_000, perSecond: 400 }], { arrivals: 'poisson' });
 * ```
 */
export class Load {
  private constructor(
    /** The steps, in order; the first may start after 0 (no calls before it). */
    readonly steps: readonly LoadStep[],
    /** Arrival spacing. */
    readonly arrivals: ArrivalProcess,
  ) {}

  /**
   * `perSecond` calls per second for the whole run.
   * @throws PolicyConfigError naming `perSecond` or `arrivals` for a bad value.
   */
  static constant(options: ConstantLoadOptions): Load {
    if (options === null || typeof options !== 'object') {
      throw new PolicyConfigError('load', options, 'must be an object { perSecond, arrivals? }');
    }
    return Load.steps([{ at: 0, perSecond: options.perSecond }], { arrivals: options.arrivals });
  }

  /**
   * A rate that changes at given times.
   * @throws PolicyConfigError naming `steps`, `steps[i].at`, `steps[i].perSecond` or `arrivals` when
   *   the list is empty, a value is out of range, or the `at` values do not increase.
   */
  static steps(steps: readonly LoadStep[], options: StepLoadOptions = {}): Load {
    if (!Array.isArray(steps) || steps.length === 0) {
      throw new PolicyConfigError('steps', steps, 'must be a non-empty array of { at, perSecond }');
    }
    let previous = -Infinity;
    const checked = steps.map((step, index) => {
      const at = checkValue(DELAY_RULE, `steps[${index}].at`, step?.at);
      const perSecond = step?.perSecond;
      if (at <= previous)
        throw new PolicyConfigError(
          `steps[${index}].at`,
          at,
          `must be greater than the previous step's at (${previous})`,
        );
      if (typeof perSecond !== 'number' || !Number.isFinite(perSecond) || perSecond < 0) {
        throw new PolicyConfigError(
          `steps[${index}].perSecond`,
          perSecond,
          'must be a finite rate >= 0 calls per second',
        );
      }
      previous = at;
      return Object.freeze({ at, perSecond });
    });
    const arrivals = options.arrivals ?? 'even';
    if (arrivals !== 'even' && arrivals !== 'poisson') {
      throw new PolicyConfigError('arrivals', arrivals, "must be 'even' or 'poisson'");
    }
    return new Load(Object.freeze(checked), arrivals);
  }

  /** Calls per second at time `at` ms (0 before the first step). */
  rateAt(at: number): number {
    let rate = 0;
    for (const step of this.steps) {
      if (step.at > at) break;
      rate = step.perSecond;
    }
    return rate;
  }

  /** A one-line description, e.g. `500/s` or `100/s from 0s, 400/s from 60s (poisson)`. */
  toString(): string {
    const text =
      this.steps.length === 1 && this.steps[0]!.at === 0
        ? `${this.steps[0]!.perSecond}/s`
        : this.steps.map((s) => `${s.perSecond}/s from ${s.at / 1000}s`).join(', ');
    return this.arrivals === 'poisson' ? `${text} (poisson)` : text;
  }

  /**
   * A generator of arrival times (ms, increasing) for one run; `Infinity` once none remain.
   * @param random the run's uniform [0, 1) source (used by `poisson` only)
   * @internal used by the simulator.
   */
  schedule(random: () => number): () => number {
    const steps = this.steps;
    let index = 0;
    let k = 0;
    let last = -Infinity;
    const poisson = this.arrivals === 'poisson';
    return () => {
      while (index < steps.length) {
        const step = steps[index]!;
        const end = index + 1 < steps.length ? steps[index + 1]!.at : Infinity;
        if (step.perSecond > 0) {
          const gap = 1000 / step.perSecond;
          let t: number;
          if (poisson) {
            const from = last > step.at ? last : step.at;
            t = from - Math.log(1 - random()) * gap;
          } else t = step.at + k * gap;
          if (t < end) {
            k++;
            last = t;
            return t;
          }
        }
        index++;
        k = 0;
      }
      return Infinity;
    };
  }
}
