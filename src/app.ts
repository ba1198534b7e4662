/**
 * @module app
 * The Worker's Hono app: the rate limiter in front of the origin.
 */
import { Hono } from 'hono/tiny'
import bundledRules from '../rules.json'
import { HttpError, problemResponse } from './errors'
import { adminApi } from './http/admin/api'
import { envoyJson } from './http/request/envoy-json'
import { carriesLimiterSecret, secretRefused } from './http/shared/credentials'
import { forwardToOrigin, withoutMethodOverride } from './http/request/origin'
import { rateLimit, type RateLimitOptions } from './http/request/rate-limit'
import { readSettings } from './http/shared/settings'
import { wire, type LimiterEnv } from './http/shared/wiring'
import { kvRules } from './provider/rules-source'
import { parseRules } from './rules'
import { logEvent } from './log'

/**
 * Builds the proxy app: the admin API under its prefix; every other request passes the rate
 * limiter, then goes to the origin.
 *
 * @param options - middleware options; by default the bundled `rules.json` overridden by KV
 */
export function createApp(options: Partial<RateLimitOptions> = {}): Hono<LimiterEnv> {
  const app = new Hono<LimiterEnv>()
  // One wiring for all three: the same rules source and counters.
  const wiring = wire(
    options.rules ?? kvRules(() => parseRules(bundledRules, 'rules.json')),
    options.limiter
  )
  app.use(adminApi(wiring))
  app.use(envoyJson(wiring))
  app.use(rateLimit({ ...options, rules: wiring.source, limiter: wiring.namespaceOf }))
  app.all('*', async (c) => {
    // The limiter's own secrets never reach the origin, whatever path they were sent to.
    const carries = carriesLimiterSecret(c.req.raw.headers, c.env)
    if (typeof carries === 'boolean' ? carries : await carries) throw secretRefused()
    const settings = readSettings(c.env)
    const request =
      settings.methodOverride === 'strip' ? withoutMethodOverride(c.req.raw) : c.req.raw
    return forwardToOrigin(request, settings.origin)
  })
  app.onError((error) => {
    // The one place a thrown error becomes a response: an `HttpError` knows its own.
    if (error instanceof HttpError) return error.getResponse()
    // Whatever else went wrong, the limiter answers with a problem, not a bare 500.
    logEvent('error', 'internal-error', { error: String(error), stack: (error as Error).stack })
    return problemResponse({
      title: 'Service Unavailable',
      status: 503,
      detail: 'The rate limiter hit an internal error.',
    })
  })
  return app
}
