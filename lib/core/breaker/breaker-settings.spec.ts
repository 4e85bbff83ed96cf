import {
  BREAKER_DEFAULTS,
  RECOVERY_DEFAULTS,
  validateBreakerSettings,
} from './breaker-settings.js';
import { PolicyConfigError } from '../errors.js';

describe('validateBreakerSettings', () => {
  it('fills the DESIGN §3.6 defaults (as the scenario matrix set them)', () => {
    expect(validateBreakerSettings(undefined)).toBe(BREAKER_DEFAULTS);
    expect(validateBreakerSettings({})).toEqual({
      consecutiveFailures: 5,
      streakSignificance: 1e-8,
      failureRateFloor: 0.5,
      recentOutcomes: 100,
      errorRateMultiple: 0,
      minimumErrorRate: 0.05,
      minimumFailures: 2,
      minimumThroughput: 20,
      errorBaselineSamples: 100,
      slowCallMultiple: 0,
      slowCallRatio: 0.5,
      latencyBaselineSamples: 20,
      tripWindow: 30_000,
      baselineWindow: 300_000,
      breakDuration: 1000,
      maximumBreak: 1000,
      jitter: 'equal',
      halfOpenProbes: 1,
      closeAfter: 2,
      probeTimeout: 30_000,
      recovery: undefined,
    });
  });

  it('reads recovery: true as the defaults and an object over them', () => {
    expect(validateBreakerSettings({ recovery: true }).recovery).toEqual({
      initialFraction: 0.05,
      rampFraction: 0.25,
      step: 0.05,
    });
    expect(validateBreakerSettings({ recovery: { step: 0.1 } }).recovery).toEqual({
      ...RECOVERY_DEFAULTS,
      step: 0.1,
    });
    expect(validateBreakerSettings({ recovery: false }).recovery).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'consecutiveFailures',
      { consecutiveFailures: 2.5 },
      'breaker.consecutiveFailures: 2.5 is invalid: must be an integer >= 0',
    ],
    [
      'errorRateMultiple',
      { errorRateMultiple: 0.5 },
      'breaker.errorRateMultiple: 0.5 is invalid: must be a finite number >= 1, or 0 to turn the relative trip off',
    ],
    [
      'minimumErrorRate',
      { minimumErrorRate: 1.5 },
      'breaker.minimumErrorRate: 1.5 is invalid: must be a number in [0, 1]',
    ],
    [
      'minimumFailures',
      { minimumFailures: 0 },
      'breaker.minimumFailures: 0 is invalid: must be an integer >= 1',
    ],
    [
      'minimumThroughput',
      { minimumThroughput: '20' },
      'breaker.minimumThroughput: "20" is invalid: must be an integer >= 1',
    ],
    [
      'errorBaselineSamples',
      { errorBaselineSamples: -1 },
      'breaker.errorBaselineSamples: -1 is invalid: must be an integer >= 1',
    ],
    [
      'slowCallMultiple',
      { slowCallMultiple: 1 },
      'breaker.slowCallMultiple: 1 is invalid: must be a finite number > 1, or 0 to turn the slow-call trip off',
    ],
    [
      'slowCallRatio',
      { slowCallRatio: 0 },
      'breaker.slowCallRatio: 0 is invalid: must be a number in (0, 1]',
    ],
    [
      'latencyBaselineSamples',
      { latencyBaselineSamples: null },
      'breaker.latencyBaselineSamples: null is invalid: must be an integer >= 1',
    ],
    [
      'tripWindow',
      { tripWindow: 999 },
      'breaker.tripWindow: 999 is invalid: must be a finite duration in ms >= 1000',
    ],
    [
      'baselineWindow',
      { baselineWindow: 20_000 },
      'breaker.baselineWindow: 20000 is invalid: must be a finite duration in ms in [tripWindow, 100 × tripWindow] = [30000, 3000000]',
    ],
    [
      'breakDuration',
      { breakDuration: 0 },
      'breaker.breakDuration: 0 is invalid: must be a finite duration in ms > 0',
    ],
    [
      'maximumBreak',
      { maximumBreak: 500 },
      'breaker.maximumBreak: 500 is invalid: must be a finite duration in ms >= breakDuration (1000)',
    ],
    [
      'streakSignificance',
      { streakSignificance: 1.5 },
      'breaker.streakSignificance: 1.5 is invalid: must be a number in (0, 1], e.g. 1e-8 (1: a run of consecutiveFailures trips at any error rate)',
    ],
    [
      'failureRateFloor',
      { failureRateFloor: 1 },
      'breaker.failureRateFloor: 1 is invalid: must be a number in [0, 1) (0 = no floor)',
    ],
    [
      'recentOutcomes',
      { recentOutcomes: 0 },
      'breaker.recentOutcomes: 0 is invalid: must be an integer in [1, 10000]',
    ],
    [
      'jitter',
      { jitter: 'half' },
      `breaker.jitter: "half" is invalid: must be 'full', 'equal' or 'none'`,
    ],
    [
      'halfOpenProbes',
      { halfOpenProbes: 101 },
      'breaker.halfOpenProbes: 101 is invalid: must be an integer in [1, 100]',
    ],
    ['closeAfter', { closeAfter: 0 }, 'breaker.closeAfter: 0 is invalid: must be an integer >= 1'],
    [
      'probeTimeout',
      { probeTimeout: Infinity },
      'breaker.probeTimeout: Infinity is invalid: must be a finite duration in ms > 0',
    ],
    [
      'recovery',
      { recovery: 'yes' },
      'breaker.recovery: "yes" is invalid: must be true, false or { initialFraction, rampFraction, step }',
    ],
    [
      'recovery.initialFraction',
      { recovery: { initialFraction: 0 } },
      'breaker.recovery.initialFraction: 0 is invalid: must be a number in (0, 1]',
    ],
    [
      'recovery.rampFraction',
      { recovery: { rampFraction: 11 } },
      'breaker.recovery.rampFraction: 11 is invalid: must be a number in (0, 10]',
    ],
    [
      'recovery.step',
      { recovery: { step: 2 } },
      'breaker.recovery.step: 2 is invalid: must be a number in (0, 1]',
    ],
  ])('rejects a bad %s naming field, value and rule', (field, input, message) => {
    let caught: unknown;
    try {
      validateBreakerSettings(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PolicyConfigError);
    expect((caught as PolicyConfigError).field).toBe(`breaker.${field}`);
    expect((caught as PolicyConfigError).message).toBe(message);
  });

  it('rejects unknown keys, also inside recovery, under the given prefix', () => {
    expect(() => validateBreakerSettings({ threshold: 0.5 }, 'policies.payments.breaker')).toThrow(
      'policies.payments.breaker.threshold: 0.5 is invalid: is not a known breaker setting (consecutiveFailures,',
    );
    expect(() => validateBreakerSettings({ recovery: { speed: 1 } })).toThrow(
      'breaker.recovery.speed: 1 is invalid: is not a known recovery setting',
    );
  });

  it('rejects a non-object', () => {
    expect(() => validateBreakerSettings(5)).toThrow(
      'breaker: 5 is invalid: must be a plain object',
    );
    expect(() => validateBreakerSettings([])).toThrow(PolicyConfigError);
  });

  it('accepts the off switches', () => {
    const off = validateBreakerSettings({
      consecutiveFailures: 0,
      errorRateMultiple: 0,
      slowCallMultiple: 0,
    });
    expect([off.consecutiveFailures, off.errorRateMultiple, off.slowCallMultiple]).toEqual([
      0, 0, 0,
    ]);
  });
});
