import { PolicyConfigError } from '../core/index.js';
import {
  checkValue,
  CLOCK_RULE,
  DELAY_RULE,
  FRACTION_RULE,
  integerRule,
} from '../core/internal.js';

/**
 * Validation shared by the testing kit's builders; every failure is a `PolicyConfigError` naming the
 * field, the value and the rule, like policy options.
 * @internal
 */

/** @throws PolicyConfigError unless `value` is an integer >= 1. */
export function checkTimes(field: string, value: unknown): number {
  return checkValue(TIMES_RULE, field, value);
}

const TIMES_RULE = integerRule(1, Number.MAX_SAFE_INTEGER, '');

/** @throws PolicyConfigError unless `value` is a finite number of milliseconds >= 0. */
export function checkDuration(field: string, value: unknown): number {
  return checkValue(DELAY_RULE, field, value);
}

/** @throws PolicyConfigError unless `value` is a probability in [0, 1]. */
export function checkRate(field: string, value: unknown): number {
  return checkValue(FRACTION_RULE, field, value);
}

/** @throws PolicyConfigError unless `value` is an HTTP status a `Response` can carry (an integer in [200, 599]). */
export function checkStatus(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 200 || value > 599) {
    throw new PolicyConfigError(field, value, 'must be an integer HTTP status in [200, 599]');
  }
  return value;
}

/** @throws PolicyConfigError unless `value` looks like a `Clock` (`now`, `setTimer`, `clearTimer`). */
export function checkClock(field: string, value: unknown): void {
  checkValue(CLOCK_RULE, field, value);
}
