import type { ChainPhase } from './protocol.js';

/** Act 2's plan: the chain, its load and its phases. */
export interface ChainScenario {
  /** Frontend calls per second. */
  readonly rate: number;
  /** A frontend call still unanswered after this long is abandoned, ms. */
  readonly callTimeoutMs: number;
  /** Seconds of healthy warm-up before the measured phases (not counted). */
  readonly warmUpSeconds: number;
  /** Nest services in the chain, frontend first; the last calls the database. */
  readonly hops: number;
  /** Attempts per call at every hop. */
  readonly attempts: number;
  /** The database's phases, in order. */
  readonly phases: readonly ChainPhase[];
}

/** Hop names, frontend first: the frontend, middle services, and the data service that calls the database. */
export function hopNames(hops: number): string[] {
  const middle = ['backend', 'inventory', 'ledger', 'catalog', 'search', 'profile'];
  if (hops === 1) return ['frontend'];
  return ['frontend', ...middle.slice(0, hops - 2), 'data service'];
}

/**
 * About 13 s per configuration. 50 calls/s and a 4 s outage: each hop's retry budget starts full (30
 * tokens, 3 more a second), so an outage shorter than that, or a lower rate, measures the bucket's
 * first burst more than its bound (30 + 3·4 retries over 200 calls ≈ 0.2 per call at most).
 */
export const QUICK_CHAIN: ChainScenario = {
  rate: 50,
  callTimeoutMs: 10_000,
  warmUpSeconds: 1,
  hops: 3,
  attempts: 3,
  phases: [
    { name: 'healthy', database: 'healthy', seconds: 2 },
    { name: 'database down', database: 'down', seconds: 4 },
    { name: 'failing half', database: 'failingHalf', seconds: 3 },
    { name: 'healthy again', database: 'healthy', seconds: 2 },
  ],
};

/** About 35 s per configuration. */
export const FULL_CHAIN: ChainScenario = {
  ...QUICK_CHAIN,
  warmUpSeconds: 2,
  phases: [
    { name: 'healthy', database: 'healthy', seconds: 5 },
    { name: 'database down', database: 'down', seconds: 10 },
    { name: 'failing half', database: 'failingHalf', seconds: 10 },
    { name: 'healthy again', database: 'healthy', seconds: 5 },
  ],
};

/** Length of the measured phases, seconds. */
export function chainSeconds(scenario: ChainScenario): number {
  return scenario.phases.reduce((sum, phase) => sum + phase.seconds, 0);
}

/** The index of the phase `elapsedMs` into the measured window falls in (the last one after its end). */
export function phaseIndexAt(scenario: ChainScenario, elapsedMs: number): number {
  let end = 0;
  for (let i = 0; i < scenario.phases.length; i++) {
    end += scenario.phases[i]!.seconds * 1000;
    if (elapsedMs < end) return i;
  }
  return scenario.phases.length - 1;
}
