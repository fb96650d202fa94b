// Two projects: `unit` (pure logic, next to the code, in parallel) and `integration`
// (real kube-local clusters and a real git server, started once by the global setup).
// `make test` runs them as two jest invocations (integration in band: the suites share
// clusters and some stop a member's apiserver) and sums both JSON reports.
const tsTransform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: tsTransform,
  testEnvironment: 'node',
};

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
      slowTestThreshold: 60,
    },
  ],
  testTimeout: 180000,
};
