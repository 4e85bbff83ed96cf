/** Jest 30 in ESM mode: run through `node --experimental-vm-modules` (see package.json "test"). */
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
