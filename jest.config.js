/**
 * Jest 30 in ESM mode: run through `node --experimental-vm-modules` (see package.json "test").
 * `npm test` runs the scenario-matrix gates (`test/matrix-gate-*`) in a second Jest process: on Node 20,
 * ESM mode keeps memory across the suites of one process (jest#11956, #14605), and the gates, run after
 * the other suites on a 2-core machine (one worker, so one process), took 1176–2890 s each instead of
 * 12–22 s alone.
 */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/lib', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  // The compatibility fixtures are separate apps with their own node_modules, run by .ci/run.
  modulePathIgnorePatterns: ['<rootDir>/test/compat/'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/compat/'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 20000,
};
