import { PolicyConfigError } from '../core/errors.js';

/**
 * Validation shared by the testing kit's builders; every failure is a `PolicyConfigError` naming the
 * field, the value and the rule, like policy options.
 * @internal
 */

/** @throws PolicyConfigError unless `value` is an integer >= 1. */
export function checkTimes(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new PolicyConfigError(field, value, 'must be an integer >= 1');
  }
  return value;
}

/** @throws PolicyConfigError unless `value` is a finite number of milliseconds >= 0. */
export function checkDuration(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new PolicyConfigError(field, value, 'must be a finite duration in ms >= 0');
  }
  return value;
}

/** @throws PolicyConfigError unless `value` is a probability in [0, 1]. */
export function checkRate(field: string, value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || value > 1) {
    throw new PolicyConfigError(field, value, 'must be a number in [0, 1]');
  }
  return value;
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
  const clock = value as { now?: unknown; setTimer?: unknown; clearTimer?: unknown } | null | undefined;
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimer !== 'function' ||
    typeof clock.clearTimer !== 'function'
  ) {
    throw new PolicyConfigError(field, value, 'must be a Clock (now, setTimer, clearTimer)');
  }
}
