// The chaos suite (npm run test:chaos): the real `npm start` process under hostile clients, load,
// signals and kill -9. Same ESM + esbuild setup as the main jest config.
export default {
  rootDir: '../..',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/chaos'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-jest.cjs' },
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  // One file at a time: the suite measures the server's memory and latency, which a second file
  // loading the same two cores would distort.
  maxWorkers: 1,
  testTimeout: 60_000,
  // Every test's name in the CI log: each is one of the items.
  verbose: true,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
};
