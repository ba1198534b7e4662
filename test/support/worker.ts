/**
 * @module test/support/worker
 * The Worker under test: the real entry plus a Durable Object that fails on purpose.
 */
export { default, LiveStatsObject, RateLimiterObject } from '../../src/index'
export { FlakyLimiterObject } from './flaky-limiter-object'
