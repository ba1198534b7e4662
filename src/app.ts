/**
 * @module app
 * The Worker's Hono app: the rate limiter in front of the origin.
 */
import { Hono } from 'hono/tiny'
import bundledRules from '../rules.json'
import { adminApi } from './http/admin'
import { envoyJson } from './http/envoy-json'
import { forwardToOrigin } from './http/origin'
import { problemResponse } from './http/problem'
import { rateLimit, type RateLimitBindings, type RateLimitOptions } from './http/rate-limit'
import { readSettings } from './http/settings'
import { kvRules, staticRules } from './provider/rules-source'
import { parseRules } from './rules'

/**
 * Builds the proxy app: the admin API under its prefix; every other request passes the rate
 * limiter, then goes to the origin.
 *
 * @param options - middleware options; by default the bundled `rules.json` overridden by KV
 */
export function createApp(
  options: Partial<RateLimitOptions> = {}
): Hono<{ Bindings: RateLimitBindings }> {
  const app = new Hono<{ Bindings: RateLimitBindings }>()
  const rules = options.rules ?? kvRules(() => parseRules(bundledRules, 'rules.json'))
  const source = 'get' in rules ? rules : staticRules(rules)
  const namespaceOf = options.limiter ?? ((c) => (c.env as RateLimitBindings).LIMITER)
  app.use(adminApi({ source, namespaceOf }))
  app.use(envoyJson({ source, namespaceOf }))
  app.use(rateLimit({ ...options, rules: source }))
  app.all('*', (c) => forwardToOrigin(c.req.raw, readSettings(c.env).origin))
  app.onError((error) => {
    // Whatever went wrong, the limiter answers with a problem, not a bare 500.
    console.error(
      JSON.stringify({
        event: 'internal-error',
        error: String(error),
        stack: (error as Error).stack,
      })
    )
    return problemResponse({
      title: 'Service Unavailable',
      status: 503,
      detail: 'The rate limiter hit an internal error.',
    })
  })
  return app
}
