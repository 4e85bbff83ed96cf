import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { BREAKER_DEFAULTS } from './breaker-settings.js';

const source = (file: string) => readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
/** The doc comment right above `marker` in `file`. */
function commentAbove(file: string, marker: string): string {
  const text = source(file);
  const end = text.indexOf(marker);
  const start = text.lastIndexOf('/**', end);
  return text.slice(start, end);
}

describe('breaker doc comments say the defaults the code has', () => {
  it('Breaker.default, CircuitBreaker and the break helper name the default numbers, not older ones', () => {
    const d = BREAKER_DEFAULTS;
    const breakerDefault = commentAbove('breaker-value.ts', 'static readonly default');
    expect(breakerDefault).toContain(`${d.consecutiveFailures} consecutive`);
    expect(breakerDefault).toContain(
      `${d.failureRateFloor} failure-rate floor over the last ${d.recentOutcomes} outcomes`,
    );
    expect(breakerDefault).toContain(
      `breaks of ${d.breakDuration} ms (maximumBreak ${d.maximumBreak} ms`,
    );
    expect(breakerDefault).toContain(
      `${d.jitter} jitter, ${d.halfOpenProbes} probe, closed after ${d.closeAfter}`,
    );
    expect([d.errorRateMultiple, d.slowCallMultiple]).toEqual([0, 0]); // "the relative and slow trips off"
    const circuit = commentAbove('circuit-breaker.ts', 'export class CircuitBreaker');
    expect(circuit).toContain(`\`breakDuration\` (default ${d.breakDuration} ms)`);
    expect(circuit).toContain(`\`maximumBreak\` (default\n * ${d.maximumBreak} ms`);
    expect(commentAbove('break-duration.ts', 'export function')).toContain(
      `${d.breakDuration} ms every time at the defaults`,
    );
    for (const file of ['breaker-value.ts', 'circuit-breaker.ts', 'break-duration.ts'])
      expect(source(file)).not.toMatch(/15 s → 2 min|relative ×5|slow ×3|`breakDuration` \(15 s\)/);
  });
});
