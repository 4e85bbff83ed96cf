import { SeededRandom } from '../../testing/seeded-random.js';
import { RecentLatency } from './recent-latency.js';

/** A seeded uniform source, so the samples are the same on every run. */
function seeded(seed: number): () => number {
  return new SeededRandom(seed).next;
}

function exact(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
}

describe('RecentLatency', () => {
  it('reads quantiles of a log-normal latency within 2 % of the exact ones', () => {
    const random = seeded(7);
    const window = new RecentLatency(30_000);
    const samples: number[] = [];
    for (let i = 0; i < 5000; i++) {
      // Box-Muller: median 40 ms, sigma 0.5.
      const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
      const ms = 40 * Math.exp(0.5 * z);
      samples.push(ms);
      window.add(i * 4, ms);
    }
    for (const q of [0.5, 0.9, 0.95, 0.99]) {
      const error = Math.abs(window.quantile(19_999, q) / exact(samples, q) - 1);
      expect(error).toBeLessThan(0.02);
    }
  });

  it('reads the p95 of a tail mix (97 % near 20 ms, 3 % near 1 s) inside the fast body', () => {
    const random = seeded(11);
    const window = new RecentLatency(30_000);
    const samples: number[] = [];
    for (let i = 0; i < 4000; i++) {
      const ms = random() < 0.03 ? 900 + 200 * random() : 15 + 10 * random();
      samples.push(ms);
      window.add(i, ms);
    }
    const p95 = window.quantile(4000, 0.95);
    expect(Math.abs(p95 / exact(samples, 0.95) - 1)).toBeLessThan(0.03);
    expect(p95).toBeLessThan(26);
    expect(Math.abs(window.quantile(4000, 0.99) / exact(samples, 0.99) - 1)).toBeLessThan(0.05);
  });

  it('keeps any one value within one bucket (4.4 %), from 0.1 ms to minutes', () => {
    for (const ms of [0.1, 0.37, 1, 3.3, 17, 250, 4_000, 90_000, 600_000]) {
      const window = new RecentLatency(30_000);
      window.add(0, ms);
      expect(Math.abs(window.quantile(0, 0.95) / ms - 1)).toBeLessThan(0.044);
    }
  });

  it('forgets samples older than the window in whole 5 s sub-windows', () => {
    const window = new RecentLatency(30_000);
    for (let i = 0; i < 100; i++) window.add(1_000, 10);
    expect(window.count(1_000)).toBe(100);
    for (let i = 0; i < 100; i++) window.add(12_000, 100);
    expect(window.count(29_999)).toBe(200);
    // The sub-window [0, 5 s) leaves at 30 s; [10 s, 15 s) at 40 s.
    expect(window.count(30_000)).toBe(100);
    expect(window.quantile(30_000, 0.5)).toBeCloseTo(100, -1);
    expect(window.count(40_000)).toBe(0);
    expect(window.quantile(40_000, 0.5)).toBeNaN();
    // After a long silence the window is empty and fills again.
    window.add(1_000_000, 5);
    expect(window.count(1_000_000)).toBe(1);
  });

  it('counts the failure rate over the same window', () => {
    const window = new RecentLatency(30_000);
    for (let i = 0; i < 30; i++) window.add(100, 10);
    for (let i = 0; i < 10; i++) window.fail(200);
    expect(window.failureRate(300)).toBe(0.25);
    expect(window.outcomes(300)).toBe(40);
    expect(window.failureRate(31_000)).toBe(0);
  });

  it('follows a shift of the whole distribution as the old sub-windows leave', () => {
    const window = new RecentLatency(30_000);
    for (let t = 0; t < 30_000; t += 10) window.add(t, 10);
    for (let t = 30_000; t < 60_000; t += 10) window.add(t, 50);
    expect(window.quantile(60_000, 0.95)).toBeCloseTo(50, -1);
    expect(Math.abs(window.quantile(60_000, 0.5) / 50 - 1)).toBeLessThan(0.044);
  });

  it('ignores NaN and counts a negative duration in the first bucket', () => {
    const window = new RecentLatency(30_000);
    window.add(0, Number.NaN);
    expect(window.count(0)).toBe(0);
    window.add(0, -5);
    expect(window.quantile(0, 0.5)).toBeLessThan(0.11);
  });
});
