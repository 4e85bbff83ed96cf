import { describe, expect, it } from '@jest/globals';
import { FLEET_LIMIT, FleetMatrix, type FleetMatrixReport } from './fleet-matrix.js';

/**
 * The fleet gate (DESIGN §8.1): 10 processes offered 800 calls/s unevenly call a provider that
 * accepts 500/s and answers the rest 429. Sharing the limit through the store gets >= 95 % of it with
 * <= 1 % 429s; an even split per process wastes the headroom of the quiet processes; no limit is a
 * 429 storm; a store outage falls back to the local shares and comes back without a storm.
 * Deterministic (virtual clock, seeds 1 and 2).
 */
let report: FleetMatrixReport;
beforeAll(async () => {
  report = await FleetMatrix.run();
}, 60_000);

const seeds = [1, 2];

describe('fleet gate: 10 processes sharing a provider limit of 500/s', () => {
  it('shared through the store: >= 95 % of the limit, <= 1 % 429s, about one store round trip per 10 calls', () => {
    for (const seed of seeds) {
      const cell = report.cell('shared', seed);
      expect(cell.limitUsed).toBeGreaterThanOrEqual(0.95);
      expect(cell.throttled).toBeLessThanOrEqual(0.01);
      expect(cell.roundTripsPerCall).toBeLessThanOrEqual(0.11);
      expect(cell.degradedEpisodes).toBe(0);
    }
  });

  it('per process (50/s each) with uneven traffic wastes headroom: at least 15 points under the shared limit, no 429', () => {
    for (const seed of seeds) {
      const cell = report.cell('per-process', seed);
      expect(cell.throttled).toBe(0);
      expect(cell.limitUsed).toBeLessThanOrEqual(report.cell('shared', seed).limitUsed - 0.15);
    }
  });

  it('no limit: a 429 storm — over 40 % of requests answered 429, retries send more than is offered', () => {
    for (const seed of seeds) {
      const cell = report.cell('no-limit', seed);
      expect(cell.throttled).toBeGreaterThan(0.4);
      expect(cell.sent).toBeGreaterThan(cell.offered * 1.05);
      expect(cell.accepted).toBeLessThanOrEqual(FLEET_LIMIT * 1.01);
    }
  });

  it('store outage: one degraded episode per process, shared again within 2 s of its return, <= 1 % 429s', () => {
    for (const seed of seeds) {
      const cell = report.cell('store-outage', seed);
      expect(cell.degradedEpisodes).toBe(10);
      expect(cell.backIn).not.toBeNull();
      expect(cell.backIn!).toBeLessThanOrEqual(2000);
      expect(cell.throttled).toBeLessThanOrEqual(0.01);
      // A store back empty grants one burst (50) again; the shares' own tokens are not carried over.
      expect(cell.throttledAfterReturn!).toBeLessThanOrEqual(FLEET_LIMIT / 10);
      // During the outage the local shares (50/s each) hold: the run's use falls below the shared row's.
      expect(cell.limitUsed).toBeLessThan(report.cell('shared', seed).limitUsed);
      expect(cell.limitUsed).toBeGreaterThan(report.cell('per-process', seed).limitUsed);
    }
  });

  it('the same seeds give the same figures (seed 1, rounded as toJSON writes them)', () => {
    const json = report.toJSON();
    const row = (name: string) => json.rows.find((r) => r.scenario === name)!.cells[0]!;
    expect(row('shared')).toMatchObject({
      sent: 497.9,
      accepted: 497.9,
      limitUsed: 0.9958,
      throttled: 0,
    });
    expect(row('per-process')).toMatchObject({ accepted: 388, limitUsed: 0.776, throttled: 0 });
    expect(row('no-limit')).toMatchObject({ sent: 881.5, accepted: 501.6, throttled: 0.429 });
    expect(row('store-outage')).toMatchObject({
      degradedEpisodes: 10,
      backIn: 530.6,
      throttledAfterReturn: 21,
      throttled: 0.0015,
    });
    expect(row('strict-provider')).toMatchObject({ limitUsed: 0.966, throttled: 0.0296 });
  });

  it('prints one row per scenario', () => {
    const lines = String(report).split('\n');
    expect(lines[0]).toBe(
      'Fleet matrix — 10 processes, 800 calls/s offered unevenly (200, 150, 120, 100, 80, 60, 40, 20, 15, 15), a provider accepting 500/s (offered, sent, accepted: per second): 30 s, seeds 1, 2',
    );
    expect(lines.slice(4).map((l) => l.split(/\s+/)[0])).toEqual([
      'shared',
      'per-process',
      'no-limit',
      'store-outage',
      'strict-provider',
    ]);
  });
});
