/**
 * @module client
 * The client side, `edge-rate-limiter/client`: `fetch` that backs off as the limiter asks.
 * Dependency-free and free of anything Worker-only, so it runs in browsers and Node too.
 */
export { fetchWithRateLimit } from './fetch-with-rate-limit'
export type {
  FetchWithRateLimitOptions,
  RateLimitResult,
  RateLimitWait,
} from './fetch-with-rate-limit'
export type { HintSource } from './server-hint'
