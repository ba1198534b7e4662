/**
 * @module index
 * The Worker entry: the proxy app and the Durable Object class wrangler binds.
 */
import { createApp } from './app'

export { RateLimiterObject } from './limiter/rate-limiter-object'
export { LiveStatsObject } from './limiter/live-stats-object'

export default createApp()
