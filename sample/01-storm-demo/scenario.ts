/**
 * The storm demo's script: how hard the load driver pushes, how the dependency misbehaves and when.
 * Both runs (budget on, budget off) replay the same scenario against a fresh app and dependency.
 */

/** The dependency's state during a stretch of the run. */
export type PhaseName = 'healthy' | 'degraded' | 'recovered';

/** One stretch of the run, in whole seconds so per-second readings never straddle two phases. */
export interface Phase {
  readonly name: PhaseName;
  readonly seconds: number;
}

/** How the fake payments dependency behaves. */
export interface DependencyProfile {
  /** Typical answer time while healthy, ms (each answer varies ±25 % around it). */
  readonly healthyLatencyMs: number;
  /** How many times slower the dependency answers while degraded. */
  readonly degradedSlowdown: number;
  /** Share of degraded answers that are 503s (after the slow wait). */
  readonly degradedErrorRate: number;
  /**
   * Requests the dependency works on at once; above it, it sheds with an immediate 503. This is what
   * makes extra load hurt: while degraded each request holds a slot 8× longer, so retries push it
   * over the edge and the shed answers invite more retries.
   */
  readonly capacity: number;
}

/** Everything one run needs. */
export interface Scenario {
  /** Calls per second the load driver sends to `/checkout` (open loop: it does not wait for answers). */
  readonly rate: number;
  /** Most `/checkout` calls in flight; a call due while at the cap is skipped and counted, never queued. */
  readonly concurrency: number;
  /** A `/checkout` call that takes longer than this is abandoned by the driver, ms. */
  readonly callTimeoutMs: number;
  /**
   * Seconds of unmeasured healthy traffic at `rate` before the run. A fresh process runs its first
   * few hundred calls through cold code (Nest's router, undici, the policy), several times slower:
   * without a warm-up, the first run's healthy seconds queued up on a busy machine and reached the
   * dependency after it had degraded.
   */
  readonly warmUpSeconds: number;
  readonly phases: readonly Phase[];
  readonly dependency: DependencyProfile;
}

// Why these numbers. With the budget on, the retries a degraded phase of T seconds at R calls/s can get
// are at most 30 (the bucket starts full) + 3·T (the floor) + 0.1 × successes (≤ R·T), so the load
// multiplier there stays below 1 + (30 + 3·T)/(R·T) + 0.1. At R = 150, T = 5 (--quick) that is 1.16
// even if every call succeeded; with half of them failing it is about 1.12. The fixed part shrinks as T
// grows (T = 15: about 1.09). Without the budget every failed attempt is retried: half of the degraded
// answers fail, so three attempts alone give 1.75×, and the extra load pushes the dependency past its
// capacity (150 calls/s × 1.75 × 160 ms ≈ 42 requests in flight against 30), so it sheds more, which
// fails more attempts, which retry: the storm settles above 2×.
const dependency: DependencyProfile = {
  healthyLatencyMs: 20,
  degradedSlowdown: 8,
  degradedErrorRate: 0.5,
  capacity: 30,
};

/** About 22 s for both runs together (warm-ups included). */
export const QUICK: Scenario = {
  rate: 150,
  concurrency: 400,
  callTimeoutMs: 5000,
  warmUpSeconds: 2,
  phases: [
    { name: 'healthy', seconds: 2 },
    { name: 'degraded', seconds: 5 },
    { name: 'recovered', seconds: 1 },
  ],
  dependency,
};

/** About 60 s for both runs together (warm-ups included). */
export const FULL: Scenario = {
  ...QUICK,
  phases: [
    { name: 'healthy', seconds: 5 },
    { name: 'degraded', seconds: 15 },
    { name: 'recovered', seconds: 5 },
  ],
};

/** Length of the load window, seconds. */
export function totalSeconds(scenario: Scenario): number {
  return scenario.phases.reduce((sum, phase) => sum + phase.seconds, 0);
}
