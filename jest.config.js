// jest in native ESM mode (middy v7 is ESM-only); TypeScript is stripped by esbuild.
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The real-client suite needs a network namespace and its own config: npm run test:clients.
  // The real-runtime suite needs a native build and its own config: npm run test:runtime.
  // The chaos suite (npm run test:chaos) loads the machine and measures memory: it runs alone.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/clients/', '<rootDir>/test/runtime/', '<rootDir>/test/chaos/'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-jest.cjs' },
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  testTimeout: 30_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
};
