module.exports = {
  testEnvironment: 'node',
  testRegex: '\\.spec\\.ts$',
  // @nresilience/nestjs is ESM: let ts-jest compile it to CommonJS like the app's own files.
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { allowJs: true, esModuleInterop: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@nresilience/nestjs/)'],
};
