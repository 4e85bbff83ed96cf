import type { ResolvedRecovery } from './breaker-settings.js';

/**
 * The admitted fraction of the opt-in Recovering state (DESIGN §3.6): the lower of
 * - a clock term climbing linearly from `initialFraction` to 1 over `rampFraction × servedBreak` ms, and
 * - an AIMD estimate starting at `initialFraction`: each fast success adds `step`, each slow success
 *   halves it (never below `initialFraction`, so a ramp cannot starve itself of the evidence it needs).
 * The ramp is complete when the fraction reaches 1.
 */
export class RecoveryRamp {
  private startedAt = 0;
  private length = 0;
  private estimate = 1;

  /** @param settings resolved recovery parameters (replaceable on reconfigure) */
  constructor(public settings: ResolvedRecovery) {}

  /**
   * Starts a ramp.
   * @param now clock reading, ms
   * @param servedBreak the break just served, ms (the ramp lasts `rampFraction` of it)
   */
  begin(now: number, servedBreak: number): void {
    this.startedAt = now;
    this.length = this.settings.rampFraction * servedBreak;
    this.estimate = this.settings.initialFraction;
  }

  /** The clock term at `now`, in [initialFraction, 1]. */
  clockTerm(now: number): number {
    const initial = this.settings.initialFraction;
    if (!(this.length > 0)) return 1;
    const elapsed = now - this.startedAt;
    if (elapsed <= 0) return initial;
    if (elapsed >= this.length) return 1;
    const value = initial + ((1 - initial) * elapsed) / this.length;
    return value < 1 ? value : 1;
  }

  /** The AIMD term, in [initialFraction, 1]. */
  get aimd(): number {
    return this.estimate;
  }

  /** Share of attempts to admit at `now`, in [initialFraction, 1]. */
  fraction(now: number): number {
    const clock = this.clockTerm(now);
    return clock < this.estimate ? clock : this.estimate;
  }

  /** An admitted attempt succeeded within the latency threshold: additive increase. */
  onFast(): void {
    const next = this.estimate + this.settings.step;
    // 0.05 + 19 × 0.05 lands a hair below 1 in binary floating point; 20 steps must be enough.
    this.estimate = next < 1 - 1e-9 ? next : 1;
  }

  /** An admitted attempt succeeded but slowly: multiplicative decrease. */
  onSlow(): void {
    const next = this.estimate / 2;
    const floor = this.settings.initialFraction;
    this.estimate = next > floor ? next : floor;
  }
}
