import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'

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
    include: ['test/**/*.test.ts'],
    // No test sleeps for real time; the ceiling is for a machine whose cores are busy elsewhere.
    testTimeout: 20_000,
  },
})
