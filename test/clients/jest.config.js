// The real-client conformance suite (npm run test:clients runs it through test/clients/run.ts,
// inside a loopback-only network namespace). Same ESM + esbuild setup as the main jest config.
export default {
  rootDir: '../..',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/clients'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-jest.cjs' },
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  // One CLI at a time: the Codex TUI cell (driven through a pseudo-terminal) times out when both
  // suites share a 2-core machine under load; serial runs also read better in CI logs.
  maxWorkers: 1,
  testTimeout: 150_000,
  // run.ts prints the table and then the plain closing line ("jest: N passed, N failed, N skipped")
  // that test/support/summary-reporter.cjs prints for npm test, so CI output still ends with one.
  reporters: ['default'],
};
