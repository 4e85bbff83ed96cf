/**
 * What the chain's processes tell each other over their IPC channel (Node's `process.send`): the
 * parent starts every hop and the database as a child process, tells them when the measured load
 * starts, and asks for their counts at the end. Phases travel with each call (`x-demo-phase`), so a
 * request is filed under the phase of the frontend call it serves, however late it arrives.
 */

/** Header carrying the index of the phase a frontend call was sent in; every hop forwards it. */
export const PHASE_HEADER = 'x-demo-phase';

/** What the database does in a phase. */
export type DatabaseState = 'healthy' | 'down' | 'failingHalf';

/** One phase of act 2. */
export interface ChainPhase {
  /** Short name for the table (`healthy`, `database down`, …). */
  readonly name: string;
  /** What the database does. */
  readonly database: DatabaseState;
  /** Length, seconds. */
  readonly seconds: number;
}

/** How a hop calls the next one. */
export type HopMode = 'naive' | 'defaults';

/** What a hop process is started with (JSON in its first argument). */
export interface HopSpec {
  /** The hop's name (`frontend`, `backend`, `data service`, …). */
  readonly name: string;
  /** `naive`: a hand-written retry loop around fetch; `defaults`: ResilienceModule + ResilientHttpModule + the inbound context. */
  readonly mode: HopMode;
  /** Base URL of what this hop calls. */
  readonly downstream: string;
  /** Attempts per call to the downstream. */
  readonly attempts: number;
}

/** Counts a process keeps per phase index. */
export interface HopCounts {
  /** Requests received, per phase. */
  readonly received: number[];
  /** Requests received with the nested-retry marker read into the ambient context (`Ambient.current().nestedRetry`), per phase. */
  readonly nested: number[];
}

/** The database's counts. */
export interface DatabaseCounts {
  /** Requests received, per phase (of the frontend call they serve). */
  readonly received: number[];
  /** Requests received per second since the load started (for the chart). */
  readonly perSecond: number[];
}

/** Parent → child. */
export type ToChild = { readonly kind: 'start' } | { readonly kind: 'counts' };

/** Child → parent. */
export type FromChild =
  | { readonly kind: 'listening'; readonly port: number }
  | {
      readonly kind: 'counts';
      readonly counts: HopCounts | DatabaseCounts;
      readonly machine: import('../machine.js').MachineReading;
    };

/** Adds `amount` to `counts[index]`, growing the array as needed. */
export function bump(counts: number[], index: number, amount = 1): void {
  while (counts.length <= index) counts.push(0);
  counts[index]! += amount;
}

/** The phase index a request carries, 0 when absent or malformed. */
export function phaseOf(value: string | string[] | undefined): number {
  const n = Number(Array.isArray(value) ? value[0] : value);
  return Number.isInteger(n) && n >= 0 && n < 64 ? n : 0;
}
