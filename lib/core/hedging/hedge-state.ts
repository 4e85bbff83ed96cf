import { RecentLatency } from '../estimators/recent-latency.js';
import {
  HEDGE_WARM_SAMPLES,
  HEDGE_WINDOW_MS,
  type ResolvedHedgeSettings,
} from './hedge-settings.js';

/** Hedges the share cap lets start back to back (its bucket's capacity). */
export const HEDGE_BURST = 3;
/** The share cap: hedges per call, as a multiple of `1 − quantile` (the share a steady distribution hedges). */
export const HEDGE_SHARE_FACTOR = 1.5;
/** Hedges (won or lost) the win rate must have seen before it may retreat. */
const WIN_RATE_SAMPLES = 20;
/** While retreated, one hedge opportunity in this many is taken (so the win rate can recover). */
const RETREAT_PROBE_EVERY = 10;
/** Failures and successes the window must hold before its failure rate suppresses hedges. */
const SUPPRESS_MINIMUM_OUTCOMES = 10;

/**
 * What a hedge learns about one dependency (a policy instance or a scope key, DESIGN §3.8): the
 * recent latency its threshold is read from and failure rate it is suppressed by, the share cap and
 * the win rate. Created on first use by `Hedge.at(...)`; the config layer pins one per policy name.
 */
export class HedgeState {
  /** Recent successful latency (from a race's start to its first success) and failure rate, 30 s. */
  readonly latency = new RecentLatency(HEDGE_WINDOW_MS);
  private tokens = HEDGE_BURST;
  private hedges = 0;
  private wins = 0;
  private opportunities = 0;

  /** @param settings validated settings (see `Hedge.at`) */
  constructor(public settings: ResolvedHedgeSettings) {}

  /**
   * The live threshold, ms: the `quantile` of recent successful latency, once the window holds 20
   * successes; else `undefined` (cold: no hedge).
   */
  threshold(now: number): number | undefined {
    const latency = this.latency;
    if (latency.count(now) < HEDGE_WARM_SAMPLES) return undefined;
    return latency.quantile(now, this.settings.quantile);
  }

  /**
   * A hedgeable call starts: the share cap earns `1.5 × (1 − quantile)` of a hedge (at most 3 held),
   * so a shift of the whole distribution — every call outlasting a threshold that has not caught
   * up — hedges at most 1.5× the share a steady one does while the window adapts.
   */
  callStarted(): void {
    const tokens = this.tokens + HEDGE_SHARE_FACTOR * (1 - this.settings.quantile);
    this.tokens = tokens > HEDGE_BURST ? HEDGE_BURST : tokens;
  }

  /**
   * Whether a hedge may start now, by what this state knows: the recent failure rate is below
   * `suppressAt × tripPoint`, the share cap holds a hedge, and the win rate (when set) has not
   * retreated — or this is the retreat's probe.
   * @param tripPoint the breaker's failure-rate trip point in (0, 1]
   */
  mayHedge(now: number, tripPoint: number): boolean {
    if (this.tokens < 1) return false;
    const latency = this.latency;
    if (
      latency.outcomes(now) >= SUPPRESS_MINIMUM_OUTCOMES &&
      latency.failureRate(now) >= this.settings.suppressAt * tripPoint
    )
      return false;
    const winRate = this.settings.winRate;
    if (
      winRate !== undefined &&
      this.hedges >= WIN_RATE_SAMPLES &&
      this.wins < winRate * this.hedges
    ) {
      return ++this.opportunities % RETREAT_PROBE_EVERY === 0;
    }
    return true;
  }

  /** A hedge started: it spends the share cap's hedge. */
  hedged(): void {
    this.tokens -= 1;
    this.hedges++;
    // The win rate weighs recent hedges: both counts halve every 100 hedges.
    if (this.hedges >= 100) {
      this.hedges /= 2;
      this.wins /= 2;
    }
  }

  /** A hedge (an attempt started by a hedge, not the one it hedged) won its race. */
  won(): void {
    this.wins++;
  }

  /** Hedges won over hedges started, recently (`NaN` before any). */
  get winShare(): number {
    return this.wins / this.hedges;
  }

  /** Takes new settings, keeping what was learnt (a config reload). */
  reconfigure(settings: ResolvedHedgeSettings): void {
    this.settings = settings;
  }
}
