/** Jest in native ESM mode: ts-jest compiles TypeScript to ESM, and the two ESM-only
 * packages that CommonJS dependencies require() are compiled to CommonJS for Jest's loader. */
const shared = {
  // jest's node environment, printing what a test logs only when it fails
  testEnvironment: '<rootDir>/test/support/quiet-environment.js',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
    '/node_modules/(content-disposition|cookie)/.+\\.js$': [
      'ts-jest',
      { useESM: false, tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie)/)'],
  testTimeout: 30000,
};

/** The split is by file name: `npm run test:unit` runs `unit` alone, `npm test` runs all three. */
export default {
  testTimeout: shared.testTimeout,
  // Two worker processes, at Node's default heap. In ESM mode (vm modules) a process keeps every
  // test file's module graph (viem, the x402 SDK, Solana, the app) it has loaded, so a worker whose
  // heap is past this after a file is replaced by a fresh one before it takes the next.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
  // without cached durations (a fresh clone), end-to-end suites before unit ones
  testSequencer: '<rootDir>/test/support/test-sequencer.js',
  projects: [
    // in-process only: no redis-server, no local chain, no browser
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    // src suites against a real redis-server started from PATH
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/src/**/*.redis-spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
