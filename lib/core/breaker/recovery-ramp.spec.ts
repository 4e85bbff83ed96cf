import { RECOVERY_DEFAULTS } from './breaker-settings.js';
import { RecoveryRamp } from './recovery-ramp.js';

describe('RecoveryRamp', () => {
  it('climbs the clock term from 5 % to 100 % over 0.25 × the break served', () => {
    const ramp = new RecoveryRamp(RECOVERY_DEFAULTS);
    ramp.begin(1000, 15_000);
    expect([
      ramp.clockTerm(1000),
      ramp.clockTerm(1000 + 1875),
      ramp.clockTerm(1000 + 3749),
      ramp.clockTerm(1000 + 3750),
    ]).toEqual([0.05, 0.525, 0.05 + (0.95 * 3749) / 3750, 1]);
  });

  it('adds a step per fast success, halves on a slow one, never below the start', () => {
    const ramp = new RecoveryRamp(RECOVERY_DEFAULTS);
    ramp.begin(0, 15_000);
    ramp.onFast();
    ramp.onFast();
    expect(ramp.aimd).toBeCloseTo(0.15, 12);
    ramp.onSlow();
    expect(ramp.aimd).toBeCloseTo(0.075, 12);
    ramp.onSlow();
    expect(ramp.aimd).toBe(0.05);
    for (let i = 0; i < 19; i++) ramp.onFast();
    expect(ramp.aimd).toBe(1);
  });

  it('admits the lower of the two terms', () => {
    const ramp = new RecoveryRamp({ initialFraction: 0.1, rampFraction: 1, step: 0.5 });
    ramp.begin(0, 1000);
    ramp.onFast();
    expect(ramp.fraction(100)).toBeCloseTo(0.19, 12); // clock 0.19 < AIMD 0.6
    expect(ramp.fraction(900)).toBeCloseTo(0.6, 12); // AIMD 0.6 < clock 0.91
  });

  it('a zero-length ramp is complete at once', () => {
    const ramp = new RecoveryRamp(RECOVERY_DEFAULTS);
    ramp.begin(0, 0);
    expect(ramp.clockTerm(0)).toBe(1);
  });
});
