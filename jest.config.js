/** Tests run against real PostgreSQL and a real Temporal test server; see scripts/test.ts. */
module.exports = {
  // jest's node environment; with TEST_PROFILE_DIR it also writes where each file's time went (npm run test:profile).
  testEnvironment: '<rootDir>/test/support/profiling-environment.ts',
  // The packages a jest worker loaded are shared by the test files it runs (TEST_NO_MODULE_SHARING=1: not).
  ...(process.env.TEST_NO_MODULE_SHARING === '1'
    ? {}
    : { runtime: '<rootDir>/test/support/module-sharing-runtime.cjs' }),
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // The longest files first, by the wall times test:profile measured when this machine has none of its own.
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  testTimeout: 120_000,
  // Four files at a time on two cores: a file uses about half a core on average (it waits on a worker process,
  // Chromium, a chain, a timer), and the longest files, which start first, wait the most (docs/development.md "Test
  // suite time").
  maxWorkers: 4,
};
