import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as kit from './index.js';
import { FakeClock } from '../core/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const sources = readdirSync(here).filter(
  (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'),
);

describe('testing kit entry point', () => {
  it('exports the public kit, FakeClock included', () => {
    expect(Object.keys(kit).sort()).toEqual(
      [
        'Chaos',
        'ChaosFaultError',
        'EventRecorder',
        'FakeClock',
        'MAX_SEED',
        'ScriptedFetch',
        'SeededRandom',
        'Sequence',
        // The simulator (lib/testing/simulation).
        'Simulate',
        'SimulationBuilder',
        'SimulationReport',
        'StoreUnavailableError',
        'VirtualClock',
        'Dependency',
        'DependencyFailureError',
        'DependencyOverloadedError',
        'DependencyTimeoutError',
        'Load',
        'RECOVERY_LEVEL',
        'RECOVERY_SECONDS',
        // The scenario matrix and its references (the SRE throttle, the AWS SDKs' retry modes).
        'AdaptiveThrottle',
        'AwsRetry',
        'BUDGET_REFERENCES',
        'ScenarioMatrix',
        'MatrixReport',
        'MemoryRateStore',
        'MATRIX_SCENARIOS',
        'MATRIX_RATE',
        'MATRIX_VARIANTS',
        'MATRIX_SEEDS',
        'matrixScenario',
        // A chain of services in the simulator, and its matrix.
        'ChainBuilder',
        'ChainReport',
        'HopAnswerError',
        'ChainMatrix',
        'ChainMatrixReport',
        'CHAIN_SCENARIOS',
        'CHAIN_MATRIX_RATE',
        'naiveHop',
        // A fleet of processes sharing a provider's rate limit (the fleet matrix).
        'runFleet',
        'ProviderThrottledError',
        'FleetMatrix',
        'FleetMatrixReport',
        'FLEET_SCENARIOS',
        'FLEET_RATES',
        'FLEET_LIMIT',
        // The charts of the CLI and the storm demo: values per second on one time axis.
        'renderTimeSeriesChart',
        'niceAxisMax',
      ].sort(),
    );
    expect(kit.FakeClock).toBe(FakeClock);
  });

  it.each(sources)(
    '%s imports only core and pure-rand, and never reads real time directly',
    (name) => {
      const text = readFileSync(join(here, name), 'utf8');
      const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      for (const path of imports) {
        expect(
          path.startsWith('./') || path.startsWith('../core/') || path.startsWith('pure-rand/'),
        ).toBe(true);
        if (path.startsWith('.')) expect(path.endsWith('.js')).toBe(true);
      }
      expect(text).not.toMatch(/Date\.now|\bsetTimeout\s*\(|AbortSignal\.timeout|@nestjs\//);
    },
  );
});
