import { PolicyConfigError } from '../errors.js';
import {
  integerRule,
  isPlainObject,
  numberRule,
  optionProblems,
  sectionRule,
} from '../rules/value-rule.js';

/** Options of `Hedge.at(quantile, options)`; every field is optional. */
export interface HedgeOptions {
  /** Attempts in flight at once, the first counted, an integer in [2, 10]. Default 2. */
  maximumConcurrent?: number;
  /**
   * No hedge while the recent failure rate is at or above this share of the breaker's trip point
   * (its `failureRateFloor`, 0.5 without a breaker), a number in (0, 1]. Default 0.5.
   */
  suppressAt?: number;
  /**
   * Opt-in retreat: while fewer than this share of recent hedges won (over at least 20), only one
   * hedge opportunity in 10 is taken. A number in [0, 1]; default `undefined` (off).
   */
  winRate?: number;
}

/** A hedge's settings, validated and filled in. */
export interface ResolvedHedgeSettings {
  /** The quantile of recent successful latency a first attempt must outlast, in (0, 1). */
  readonly quantile: number;
  readonly maximumConcurrent: number;
  readonly suppressAt: number;
  readonly winRate: number | undefined;
}

/** The config form: `hedge: { quantile, maximumConcurrent?, suppressAt?, winRate? }`. */
export interface HedgeConfig extends HedgeOptions {
  quantile: number;
}

/** Window of recent latency the threshold is read from, ms (DESIGN §3.8). */
export const HEDGE_WINDOW_MS = 30_000;
/** Successes the window must hold before the threshold arms (DESIGN §3.8). */
export const HEDGE_WARM_SAMPLES = 20;
/** Defaults of {@link HedgeOptions}. */
export const HEDGE_DEFAULTS = Object.freeze({ maximumConcurrent: 2, suppressAt: 0.5 });

/** Rules of the hedge settings, each written once (`Hedge.at` and config). */
export const HEDGE_RULES = {
  quantile: numberRule('must be a number in (0, 1), e.g. 0.95', (v) => v > 0 && v < 1),
  maximumConcurrent: integerRule(2, 10, 'attempts in flight at once, the first counted'),
  suppressAt: numberRule('must be a number in (0, 1]', (v) => v > 0 && v <= 1),
  winRate: numberRule('must be a number in [0, 1]', (v) => v >= 0 && v <= 1),
} as const;

const OPTION_RULES = {
  maximumConcurrent: HEDGE_RULES.maximumConcurrent,
  suppressAt: HEDGE_RULES.suppressAt,
  winRate: HEDGE_RULES.winRate,
};
const CONFIG_RULES = { quantile: HEDGE_RULES.quantile, ...OPTION_RULES };

/**
 * Validates `Hedge.at(quantile, options)`.
 * @param field the path the errors name (`hedge` from `with()`, `policies.x.hedge` from config)
 * @throws PolicyConfigError naming `<field>.<key>`, the value and the rule
 */
export function hedgeSettings(
  quantile: unknown,
  options: unknown,
  field: string,
): ResolvedHedgeSettings {
  if (!HEDGE_RULES.quantile.accepts(quantile))
    throw new PolicyConfigError(`${field}.quantile`, quantile, HEDGE_RULES.quantile.rule);
  const o = checkSection(
    options ?? {},
    OPTION_RULES,
    field,
    'hedge option',
    '{ maximumConcurrent?, suppressAt?, winRate? }',
  );
  return freeze(quantile, o);
}

/**
 * Reads the config form of a hedge.
 * @returns the settings, `undefined` for `false`/`undefined` (none)
 * @throws PolicyConfigError naming the path, the value and the rule (an unknown key, a missing quantile)
 */
export function hedgeSettingsFrom(
  value: unknown,
  field: string,
): ResolvedHedgeSettings | undefined {
  if (value === undefined || value === false) return undefined;
  const o = checkSection(
    value,
    CONFIG_RULES,
    field,
    'hedge setting',
    '{ quantile, maximumConcurrent?, suppressAt?, winRate? }, or false',
  );
  if (o.quantile === undefined)
    throw new PolicyConfigError(`${field}.quantile`, undefined, HEDGE_RULES.quantile.rule);
  return freeze(o.quantile as number, o);
}

function freeze(quantile: number, o: Record<string, unknown>): ResolvedHedgeSettings {
  return Object.freeze({
    quantile,
    maximumConcurrent:
      (o.maximumConcurrent as number | undefined) ?? HEDGE_DEFAULTS.maximumConcurrent,
    suppressAt: (o.suppressAt as number | undefined) ?? HEDGE_DEFAULTS.suppressAt,
    winRate: o.winRate as number | undefined,
  });
}

function checkSection(
  value: unknown,
  rules: Record<string, (typeof HEDGE_RULES)[keyof typeof HEDGE_RULES]>,
  field: string,
  what: string,
  shape: string,
): Record<string, unknown> {
  if (!isPlainObject(value))
    throw new PolicyConfigError(field, value, sectionRule(value, `must be ${shape}`));
  const problems = optionProblems(value, rules, field, what);
  if (problems.length > 0) throw problems[0];
  return value;
}
