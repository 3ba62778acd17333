// The real-runtime suite (npm run test:runtime): the production bundle under the Lambda runtime
// interface client, compared with `npm start`. It needs the client's native part, built once by
// test/runtime/build-ric.ts (the npm script runs it first). Same ESM + esbuild setup as the main
// jest config.
export default {
  rootDir: '../..',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/runtime'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-jest.cjs' },
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  // Each file runs two gateways as child processes; one file at a time on a small machine.
  maxWorkers: 1,
  testTimeout: 60_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
};
