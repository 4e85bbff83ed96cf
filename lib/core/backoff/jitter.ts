import { JITTER_NAME_RULE } from '../rules/option-rules.js';
/**
 * Spreads a computed delay so clients that failed together do not retry together.
 * A jitter maps a delay `d` (ms) and a uniform draw `u` in [0, 1) to a delay in [0, d].
 */
export type Jitter = (delay: number, random: () => number) => number;

/** Jitter choices (DESIGN §3.4). */
export const Jitter = {
  /** Uniform in [0, d]: the widest spread; the default for retries. */
  full: ((delay, random) => delay * random()) as Jitter,
  /** d/2 + uniform [0, d/2]: never less than half the delay; the default for breaker breaks. */
  equal: ((delay, random) => delay / 2 + (delay / 2) * random()) as Jitter,
  /** Exactly d. */
  none: ((delay) => delay) as Jitter,
} as const;

/** Looks a jitter up by its config name (`full`, `equal`, `none`). */
export function jitterNamed(name: string): Jitter | undefined {
  return JITTER_NAME_RULE.accepts(name) ? Jitter[name] : undefined;
}
