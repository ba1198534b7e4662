import { createExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { kvRules, parseRules, rateLimit, RULES_KV_KEY, type RateLimitBindings } from '../src/lib'

describe('the limiter mounted by another Hono Worker', () => {
  const rules = parseRules(
    {
      version: 1,
      rules: [{ id: 'lib-writes', key: ['ip'], algorithm: 'token-bucket', limit: 2, period: '1h' }],
    },
    'my-rules'
  )
  const app = new Hono<{ Bindings: RateLimitBindings }>()
  app.use('/api/*', rateLimit({ rules }))
  app.get('/api/thing', (c) =>
    c.json({ ok: true, remaining: c.get('rateLimit').decisions[0]?.decision.remaining })
  )
  app.get('/free', (c) => c.text('free'))

  const get = (path: string) =>
    app.request(path, { headers: { 'cf-connecting-ip': '192.0.2.10' } }, env)

  it('limits only the routes it is mounted on and exposes the decision to handlers', async () => {
    expect(await (await get('/api/thing')).json()).toEqual({ ok: true, remaining: 1 })
    expect((await get('/api/thing')).status).toBe(200)
    const denied = await get('/api/thing')
    expect(denied.status).toBe(429)
    expect(denied.headers.get('content-type')).toBe('application/problem+json')
    const free = await get('/free')
    expect(free.status).toBe(200)
    expect(free.headers.get('X-RateLimit-Limit')).toBeNull()
  })

  it('says what is missing when no Durable Object namespace is bound', async () => {
    const unbound = new Hono<{ Bindings: RateLimitBindings }>()
    unbound.use(rateLimit({ rules }))
    unbound.get('/', (c) => c.text('ok'))
    unbound.onError((error) => new Response(error.message, { status: 500 }))
    const response = await unbound.request(
      '/',
      { headers: { 'cf-connecting-ip': '192.0.2.11' } },
      { ...env, LIMITER: undefined }
    )
    expect(await response.text()).toBe(
      'rateLimit(): no Durable Object namespace; bind LIMITER in wrangler.toml or pass options.limiter'
    )
  })

  it('tells handlers when no rule applied', async () => {
    const open = new Hono<{ Bindings: RateLimitBindings }>()
    open.use(rateLimit({ rules: parseRules({ version: 1, rules: [] }, 'none') }))
    open.get('/', (c) => c.json(c.get('rateLimit')))
    expect(await (await open.request('/', {}, env)).json()).toEqual({
      decisions: [],
      unenforced: [],
    })
  })

  it('can take its rules from KV with its own defaults', async () => {
    await env.RULES.put(
      RULES_KV_KEY,
      JSON.stringify({
        version: 1,
        rules: [{ id: 'lib-kv', key: [], algorithm: 'sliding-window', limit: 7, period: '1m' }],
      })
    )
    const kvApp = new Hono<{ Bindings: RateLimitBindings }>()
    kvApp.use(rateLimit({ rules: kvRules(rules) }))
    kvApp.get('/', (c) => c.text('ok'))
    const response = await kvApp.request('/', {}, env, createExecutionContext())
    expect(response.headers.get('RateLimit-Policy')).toBe('"lib-kv";q=7;w=60')
  })

  it("answers a request the rules cannot read with its own 400, whatever the app's onError", async () => {
    const keyed = new Hono<{ Bindings: RateLimitBindings }>()
    const byKey = { id: 'lib-keyed', key: ['query:k'], algorithm: 'fixed-window', limit: 5 }
    keyed.use(
      rateLimit({ rules: parseRules({ version: 1, rules: [{ ...byKey, period: '1m' }] }, 'k') })
    )
    keyed.get('/', (c) => c.text('ok'))
    keyed.onError(() => new Response('the app saw it', { status: 500 }))
    const response = await keyed.request('/?k=a&k=b', {}, env)
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({ status: 400, rule: 'lib-keyed' })
  })
})
