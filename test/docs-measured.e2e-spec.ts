import { readFileSync } from 'node:fs';
import { describe, expect, it, jest } from '@jest/globals';
import { cutHungAttempt } from '../docs/examples/measured.js';

describe('docs/measured.md', () => {
  it('cuts a hung first attempt at the measured ceiling and retries after the measured base; explain prints what the guide shows', async () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const { answer, tookMs, measured, explained } = await cutHungAttempt();
    log.mockRestore();
    expect(answer).toBe('price');
    const ceiling = measured.attemptCeiling!;
    const base = measured.backoffBase!;
    // 3 × the p95 and the p50 of 20 ms successes, each within one histogram bucket (4.4 %).
    expect(ceiling / 60).toBeGreaterThanOrEqual(1);
    expect(ceiling / 60).toBeLessThan(1.044);
    expect(base / 20).toBeGreaterThanOrEqual(1);
    expect(base / 20).toBeLessThan(1.044);
    // (read after the call: its retry added one more 20 ms sample)
    expect(tookMs).toBeCloseTo(ceiling + base + 20, 1);
    expect(measured.hedgeThreshold).toBeUndefined();
    expect(measured.eventLoopDelay).toBeUndefined();
    const guide = readFileSync('docs/measured.md', 'utf8');
    expect(guide).toContain(['```text', explained, '```'].join('\n'));
  });
});
