import { Ambient, Criticality } from './ambient-context.js';

/**
 * The criticality part of the ambient context (DESIGN §3.9), for code that labels its own work. A
 * policy with `useAmbientCriticality` reads it: `sheddable` work retries only while at least half
 * the retry budget would remain (DESIGN §3.5). Unlabeled work is `critical`.
 *
 * ```ts
 * await AmbientCriticality.run('sheddable', () => recommendations.fetch(user));
 * ```
 */
export const AmbientCriticality = {
  /**
   * Runs `fn` with `level` as the ambient criticality (through every await of what it starts) and
   * returns what `fn` returns.
   * @throws PolicyConfigError (field `ambient.criticality`) when `level` is not a level
   */
  run<T>(level: Criticality, fn: () => T): T {
    return Ambient.run({ criticality: level }, fn);
  },

  /** The current level: the innermost label, `critical` when unlabeled. */
  current(): Criticality {
    return Ambient.criticality();
  },

  /** The lower of two levels (a label and what the inbound request carries: a caller can lower, never raise). */
  lower(a: Criticality, b: Criticality): Criticality {
    return Criticality.rank(a) <= Criticality.rank(b) ? a : b;
  },
} as const;
