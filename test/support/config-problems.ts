import { expect } from '@jest/globals';
import { parseResilienceConfig } from '../../lib/config/policy-config.js';
import { ResilienceConfigError } from '../../lib/config/resilience-config.error.js';

/**
 * The problems `parseResilienceConfig(config)` reports, as their messages; fails the test when the
 * config is accepted or the error is not a `ResilienceConfigError`.
 */
export function problemsOf(config: unknown): string[] {
  try {
    parseResilienceConfig(config);
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceConfigError);
    return (error as ResilienceConfigError).problems.map((p) => p.message);
  }
  throw new Error('expected the config to be rejected');
}
