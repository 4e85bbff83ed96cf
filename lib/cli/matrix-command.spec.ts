import { MATRIX_SEEDS } from '../testing/simulation/matrix.js';
import { Resilience, RetryBudget } from '../core/index.js';
import { commandVariants, parseSeeds } from './matrix-command.js';
import { UsageError } from './usage-error.js';

describe('--seeds', () => {
  it('reads a comma-separated list of seeds, and the matrix seeds when left out', () => {
    expect(parseSeeds(' 1, 2,4294967295')).toEqual([1, 2, 4294967295]);
    expect(parseSeeds(undefined)).toBe(MATRIX_SEEDS);
  });

  it('refuses a list with a seed out of range or not a whole number, naming the flag and the seed rule', () => {
    const rule =
      'must be a comma-separated list of seeds, each an integer in [0, 4294967295], e.g. 1,2,3';
    expect(() => parseSeeds('1,4294967296')).toThrow(
      new UsageError('--seeds', '1,4294967296', rule),
    );
    expect(() => parseSeeds('1,x')).toThrow(`--seeds: "1,x" is invalid: ${rule}`);
    expect(() => parseSeeds('')).toThrow(`--seeds: "" is invalid: ${rule}`);
  });
});

describe('the rows of simulate --matrix', () => {
  it('puts breaker off and budget off beside the policy only when it has them, then the SRE throttle', () => {
    expect(commandVariants(Resilience.http)).toEqual([
      'policy',
      'breakerOff',
      'budgetOff',
      'adaptiveThrottle',
    ]);
    expect(commandVariants(Resilience.default)).toEqual([
      'policy',
      'budgetOff',
      'adaptiveThrottle',
    ]);
    expect(commandVariants(Resilience.default.with({ budget: RetryBudget.none }))).toEqual([
      'policy',
      'adaptiveThrottle',
    ]);
  });
});
