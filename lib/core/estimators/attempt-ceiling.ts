import { PolicyConfigError } from '../errors.js';
import { isPlainObject, numberRule, optionProblems, sectionRule } from '../rules/value-rule.js';
import { MeasuredLatency } from './measured-latency.js';

/** Options of `AttemptCeiling.measured(options)`; every field is optional. */
export interface AttemptCeilingOptions {
  /** The ceiling as a multiple of the measured quantile, a finite number >= 1. Default 3. */
  multiple?: number;
  /** The quantile of successful attempt durations it multiplies, in (0, 1). Default 0.95. */
  quantile?: number;
}

/** An attempt ceiling's settings, validated and filled in. */
export interface ResolvedCeilingSettings {
  /** The ceiling as a multiple of the measured quantile, >= 1. */
  readonly multiple: number;
  /** The quantile of successful attempt durations it multiplies, in (0, 1). */
  readonly quantile: number;
}

/** Defaults of {@link AttemptCeilingOptions} (DESIGN §3.7: 3 × the p95). */
export const CEILING_DEFAULTS: ResolvedCeilingSettings = Object.freeze({
  multiple: 3,
  quantile: 0.95,
});

/** Rules of the ceiling settings, each written once (`AttemptCeiling.measured` and config). */
export const CEILING_RULES = {
  multiple: numberRule('must be a finite number >= 1', (v) => v >= 1),
  quantile: numberRule('must be a number in (0, 1), e.g. 0.95', (v) => v > 0 && v < 1),
} as const;

/**
 * A policy's `attemptCeiling` option as a value (DESIGN §3.7): once 100 successful attempts are in
 * the last 5 minutes, an attempt is bounded by `multiple` × the `quantile` of their durations (3 ×
 * the p95 by default) when that is shorter than its bound would be (`attemptTimeout`, the time left
 * on the deadline, or none). Measurement only ever tightens: the ceiling never lengthens a bound.
 * An attempt it cuts fails with `AttemptTimeoutError` (Transient: retried like any timeout).
 *
 * When more than 15 % of recent attempts outlast it (the dependency's latency moved: a brownout or
 * a slower release that the 5-minute window has not caught up with) it stands aside — attempts run
 * to their configured bound — until fewer than 5 % do, so it never fails calls the dependency still
 * answers. Resolved to a {@link MeasuredLatency} per owner (a policy instance or a scope key),
 * created on first use; `AttemptCeiling.using(state)` always resolves to that state (the config
 * layer pins one per policy name). `adaptive: false` on the policy turns it off.
 */
export class AttemptCeiling {
  private readonly perOwner: WeakMap<object, MeasuredLatency> | undefined;

  private constructor(
    /** The ceiling's settings. */
    readonly settings: ResolvedCeilingSettings,
    private readonly instance?: MeasuredLatency,
  ) {
    this.perOwner = instance === undefined ? new WeakMap() : undefined;
  }

  /** The ceiling of DESIGN §3.7: 3 × the p95 of successful attempts over 5 minutes. */
  static readonly default: AttemptCeiling = new AttemptCeiling(CEILING_DEFAULTS);

  /**
   * A ceiling of `multiple` × the `quantile` of successful attempt durations.
   * @param options `{ multiple = 3, quantile = 0.95 }`
   * @throws PolicyConfigError naming `attemptCeiling.<field>`, the value and the rule
   */
  static measured(options: AttemptCeilingOptions = {}): AttemptCeiling {
    return new AttemptCeiling(ceilingSettings(options, 'attemptCeiling'));
  }

  /** A value that always resolves to `state`, with `settings`. */
  static using(state: MeasuredLatency, settings: ResolvedCeilingSettings): AttemptCeiling {
    return new AttemptCeiling(settings, state);
  }

  /**
   * Reads the config form (`attemptCeiling:` of a policy or of `defaults`).
   * @param value `true` (the defaults), `{ multiple?, quantile? }`, or `false`/`undefined` for none
   * @param field the path errors name
   * @returns the settings, `undefined` for none
   * @throws PolicyConfigError naming the path, the value and the rule
   */
  static settingsFrom(
    value: unknown,
    field = 'attemptCeiling',
  ): ResolvedCeilingSettings | undefined {
    if (value instanceof AttemptCeiling) return value.settings;
    if (value === undefined || value === false) return undefined;
    if (value === true) return CEILING_DEFAULTS;
    return ceilingSettings(value, field);
  }

  /** The measured latency for `owner`, created on first use (or the pinned one). */
  resolve(owner: object): MeasuredLatency {
    if (this.instance !== undefined) return this.instance;
    let state = this.perOwner!.get(owner);
    if (state === undefined) {
      state = new MeasuredLatency();
      this.perOwner!.set(owner, state);
    }
    return state;
  }
}

function ceilingSettings(value: unknown, field: string): ResolvedCeilingSettings {
  const shape = '{ multiple?, quantile? }';
  if (!isPlainObject(value))
    throw new PolicyConfigError(
      field,
      value,
      sectionRule(value, `must be true, false or ${shape}`),
    );
  const problems = optionProblems(value, CEILING_RULES, field, 'attempt ceiling option');
  if (problems.length > 0) throw problems[0];
  return Object.freeze({
    multiple: (value.multiple as number | undefined) ?? CEILING_DEFAULTS.multiple,
    quantile: (value.quantile as number | undefined) ?? CEILING_DEFAULTS.quantile,
  });
}
