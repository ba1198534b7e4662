import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'

/**
 * Test files that hold no state of their own beyond a test: pure algorithms and rules, the
 * client helper, the tools and the architecture checks. They share their workers (no fresh
 * module graph per file), which saves a worker's start per file: most of the suite's time.
 * Files that reach the Worker, its objects or its per-isolate caches (lease books, rules cache,
 * stats) keep a fresh isolate each: they rely on module state starting empty.
 */
const SHARED = [
  'test/algorithms/**/*.test.ts',
  'test/rules/**/*.test.ts',
  'test/client/**/*.test.ts',
  'test/tools/**/*.test.ts',
  'test/live/**/*.test.ts',
  'test/*.test.ts',
]

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      // The test entry re-exports the Worker plus a deliberately failing Durable Object.
      main: './test/support/worker.ts',
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        durableObjects: {
          LIMITER: { className: 'RateLimiterObject', useSQLite: true },
          FLAKY_LIMITER: { className: 'FlakyLimiterObject', useSQLite: true },
          LIMITER_STATS: { className: 'LiveStatsObject', useSQLite: true },
        },
        bindings: {
          ORIGIN: 'demo',
          TEST_ORIGIN: `http://127.0.0.1:${inject<number>('originPort')}`,
        },
      },
    })),
  ],
  test: {
    globalSetup: ['./test/support/origin-server.ts'],
    // No test sleeps for real time; the ceiling is for a machine whose cores are busy elsewhere.
    testTimeout: 20_000,
    projects: [
      { extends: true, test: { name: 'shared', include: SHARED, isolate: false } },
      {
        extends: true,
        test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: SHARED },
      },
    ],
  },
})
