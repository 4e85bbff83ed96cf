import { type ValueRule, valueRule } from '../rules/value-rule.js';
import type { Clock } from './clock.js';

/** A time source: the one "is it a Clock" test (policy option, module option, testing kit). */
export const CLOCK_RULE: ValueRule<Clock> = valueRule(
  'must be a Clock (now, setTimer, clearTimer), e.g. new FakeClock()',
  (v) => {
    if (typeof v !== 'object' && typeof v !== 'function') return false;
    const clock = v as Partial<Record<keyof Clock, unknown>>;
    return (
      typeof clock.now === 'function' &&
      typeof clock.setTimer === 'function' &&
      typeof clock.clearTimer === 'function'
    );
  },
);
