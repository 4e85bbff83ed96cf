import type { BreakJitter } from './breaker-settings.js';
import { Jitter } from '../backoff/jitter.js';

/**
 * The nominal break for the `opens`-th consecutive open: `base × 2^(opens-1)`, capped at `maximum`
 * (1000 ms every time at the defaults, whose `maximumBreak` equals `breakDuration`; 15 s, 30 s, 60 s,
 * 120 s, 120 s … with `breakDuration: 15000, maximumBreak: 120000`; DESIGN §3.6). Never overflows: any `opens`
 * gives a finite value in [base, maximum].
 * @param opens consecutive opens including this one (1 for the first); values below 1 count as 1
 * @param base first break, ms
 * @param maximum cap, ms (≥ base)
 */
export function nominalBreak(opens: number, base: number, maximum: number): number {
  // 2^52 exceeds any finite cap ratio that matters, and keeps the power finite.
  const doublings = opens <= 1 ? 0 : Math.min(opens - 1, 52);
  const value = base * 2 ** doublings;
  return value < maximum ? value : maximum;
}

/**
 * The break actually served for a nominal break (ms):
 * - `'equal'`: `nominal/2 + U[0, nominal/2)` — at least half the break is always served (the rest
 *   period survives while pods de-correlate; DESIGN §3.6);
 * - `'full'`: `U[0, nominal)` — best de-correlation, no guaranteed rest (may be close to 0);
 * - `'none'`: exactly `nominal`.
 * @param random a source of uniform numbers in [0, 1)
 */
export function servedBreak(nominal: number, jitter: BreakJitter, random: () => number): number {
  return Jitter[jitter](nominal, () => clampUnit(random()));
}

/** A misbehaving random source must not produce a negative or oversized break. */
function clampUnit(r: number): number {
  return r >= 0 ? (r < 1 ? r : 1) : 0;
}
