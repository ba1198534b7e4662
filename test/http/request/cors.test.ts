import { env } from 'cloudflare:workers'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { EXPOSED_HEADERS } from '../../../src/http/request/cors'
import { rateLimit, type RateLimitBindings } from '../../../src/http/request/rate-limit'
import { parseRules } from '../../../src/rules'
import { client, rules } from '../../support/http'

const APP = 'https://app.example'
const EXPOSED = EXPOSED_HEADERS.join(', ')

/** One request per address and path a minute, under /api/. */
const onePerPath = rules({
  id: 'one-per-path',
  match: { path: '/api/*' },
  key: ['ip', 'path'],
  algorithm: 'fixed-window',
  limit: 1,
  period: '1m',
})

/** The response's CORS headers (and Vary), by lower-case name. */
function corsOf(response: Response): Record<string, string> {
  return Object.fromEntries(
    [...response.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary')
  )
}

const preflight = (ip: string, origin = APP) => ({
  ip,
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': 'PUT',
    'access-control-request-headers': 'x-api-key, content-type',
  },
})

describe('CORS_ORIGINS with a list of origins', () => {
  const send = client({ rules: onePerPath }, { CORS_ORIGINS: `${APP}, http://localhost:5173` })

  it('lets a page read the 429 and its Retry-After, and exposes the headers on allowed answers', async () => {
    const init = { ip: '198.51.100.101', headers: { origin: APP } }
    const allowed = await send('/api/a', init)
    expect(allowed.status).toBe(200)
    // The origin (the demo) does no CORS: the limiter does not grant it, it only exposes its own.
    expect(corsOf(allowed)).toEqual({ 'access-control-expose-headers': EXPOSED, vary: 'Origin' })

    const denied = await send('/api/a', init)
    expect(denied.status).toBe(429)
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(corsOf(denied)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-expose-headers': EXPOSED,
      vary: 'Origin',
    })
  })

  it('gives an origin not on the list no CORS headers', async () => {
    const init = { ip: '198.51.100.102', headers: { origin: 'https://evil.example' } }
    expect(corsOf(await send('/api/a', init))).toEqual({ vary: 'Origin' })
    const denied = await send('/api/a', init)
    expect(denied.status).toBe(429)
    expect(corsOf(denied)).toEqual({ vary: 'Origin' })
    const none = await send('/api/a', { ip: '198.51.100.102' })
    expect([none.status, corsOf(none)]).toEqual([429, { vary: 'Origin' }])
  })

  it('answers a limited preflight as the origin would, and lets others through untouched', async () => {
    const passed = await send('/api/put', preflight('198.51.100.103'))
    // The demo origin answers OPTIONS itself: what it says, with no CORS header added.
    expect(passed.status).toBe(200)
    expect(passed.headers.get('x-demo-origin')).toBe('1')
    expect(corsOf(passed)).toEqual({})

    const limited = await send('/api/put', preflight('198.51.100.103'))
    expect(limited.status).toBe(204)
    expect(corsOf(limited)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'PUT',
      'access-control-allow-headers': 'x-api-key, content-type',
      vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    })
    // ...and the request the page then sends gets the 429, which it can read.
    const put = await send('/api/put', {
      ip: '198.51.100.103',
      method: 'PUT',
      headers: { origin: APP },
    })
    expect(put.status).toBe(429)
    expect(put.headers.get('access-control-allow-origin')).toBe(APP)

    const other = await send('/api/put', preflight('198.51.100.103', 'https://evil.example'))
    expect([other.status, corsOf(other)]).toEqual([429, { vary: 'Origin' }])
  })

  it('gives the Worker’s own 400 and 502 the same headers', async () => {
    const secret = client({ rules: onePerPath }, { CORS_ORIGINS: APP, ADMIN_TOKEN: 'admin-secret' })
    const refused = await secret('/api/x', {
      ip: '198.51.100.104',
      headers: { origin: APP, authorization: 'Bearer admin-secret' },
    })
    expect(refused.status).toBe(400)
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP)

    const broken = client({ rules: onePerPath }, { CORS_ORIGINS: APP, ORIGIN: 'ftp://nowhere' })
    const gateway = await broken('/api/x', { ip: '198.51.100.105', headers: { origin: APP } })
    expect(gateway.status).toBe(502)
    expect(corsOf(gateway)).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-expose-headers': EXPOSED,
    })
  })

  it('gives the admin API none', async () => {
    const admin = client({ rules: onePerPath }, { CORS_ORIGINS: '*', ADMIN_TOKEN: 'admin-secret' })
    const headers = { origin: APP, authorization: 'Bearer admin-secret' }
    const rules = await admin('/__ratelimit/rules', { ip: '198.51.100.106', headers })
    expect(rules.status).toBe(200)
    expect(corsOf(rules)).toEqual({})
    const wrong = await admin('/__ratelimit/rules', {
      ip: '198.51.100.106',
      headers: { origin: APP, authorization: 'Bearer wrong' },
    })
    expect(wrong.status).toBe(401)
    expect(corsOf(wrong)).toEqual({})
  })
})

describe('CORS_ORIGINS=*', () => {
  const send = client({ rules: onePerPath }, { CORS_ORIGINS: '*' })

  it('lets any origin read the 429, without Vary', async () => {
    const init = { ip: '198.51.100.111', headers: { origin: 'https://anyone.example' } }
    expect(corsOf(await send('/api/a', init))).toEqual({
      'access-control-expose-headers': EXPOSED,
    })
    const denied = await send('/api/a', init)
    expect(denied.status).toBe(429)
    expect(corsOf(denied)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSED,
    })
  })
})

describe('CORS_ORIGINS=* and preflights the limiter answers itself', () => {
  const send = client({ rules: onePerPath }, { CORS_ORIGINS: '*' })
  const ask = (ip: string, method: string, headers: string) => ({
    ip,
    method: 'OPTIONS',
    headers: {
      origin: 'https://anyone.example',
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    },
  })

  it('grants no method or header the origin has not approved: a limited PUT preflight gets its 429', async () => {
    expect((await send('/api/star-put', ask('198.51.100.113', 'PUT', 'x-api-key'))).status).toBe(
      200
    )
    const limited = await send('/api/star-put', ask('198.51.100.113', 'PUT', 'x-api-key'))
    expect(limited.status).toBe(429)
    expect(corsOf(limited)).toEqual({})
  })

  it('grants a limited preflight for what a page may send without one (POST, Content-Type)', async () => {
    const init = ask('198.51.100.114', 'POST', 'Content-Type')
    expect((await send('/api/star-post', init)).status).toBe(200)
    const limited = await send('/api/star-post', init)
    expect(limited.status).toBe(204)
    expect(corsOf(limited)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Content-Type',
      vary: 'Access-Control-Request-Method, Access-Control-Request-Headers',
    })
  })
})

describe('CORS_ORIGINS=mirror', () => {
  const send = client({ rules: onePerPath }, { CORS_ORIGINS: 'mirror', ORIGIN: env.TEST_ORIGIN })

  it('copies what the origin said on its last answer for the path and Origin', async () => {
    const init = { ip: '198.51.100.121', headers: { origin: APP } }
    // The origin's answer, with the rate-limit headers exposed too: on its 200 and on our 429.
    const mirrored = {
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': `X-Origin-Header, ${EXPOSED}`,
      vary: 'Origin',
    }
    const allowed = await send('/api/m?cors', init)
    expect(allowed.status).toBe(200)
    expect(corsOf(allowed)).toEqual(mirrored)
    const denied = await send('/api/m?cors', init)
    expect(denied.status).toBe(429)
    expect(corsOf(denied)).toEqual(mirrored)
  })

  it('has nothing to mirror before the origin has answered that Origin on that path', async () => {
    const other = { ip: '198.51.100.122', headers: { origin: 'https://other.example' } }
    expect((await send('/api/n?cors', { ip: '198.51.100.122' })).status).toBe(200)
    const denied = await send('/api/n?cors', other)
    expect([denied.status, corsOf(denied)]).toEqual([429, { vary: 'Origin' }])
  })

  it("answers a limited preflight with the origin's last preflight answer", async () => {
    const passed = await send('/api/p?cors', preflight('198.51.100.123'))
    expect(passed.status).toBe(204)
    const limited = await send('/api/p?cors', preflight('198.51.100.123'))
    expect(limited.status).toBe(204)
    expect(corsOf(limited)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, PUT',
      'access-control-allow-headers': 'x-api-key',
      'access-control-max-age': '600',
      vary: 'Origin',
    })
  })

  it('mirrors per host: what one host’s origin approved is not granted on another', async () => {
    const ip = '198.51.100.126'
    expect((await send('https://a.example.com/api/h?cors', preflight(ip))).status).toBe(204)
    // The same client and path on another host: limited, and that host's origin never answered.
    const limited = await send('https://c.example.com/api/h?cors', preflight(ip))
    expect(limited.status).toBe(429)
    expect(corsOf(limited)).toEqual({ vary: 'Origin' })
  })

  it('withdraws what it mirrors once the origin answers without CORS', async () => {
    const init = { ip: '198.51.100.124', headers: { origin: APP } }
    const ip2 = { ip: '198.51.100.125', headers: { origin: APP } }
    expect((await send('/api/w?cors', init)).status).toBe(200)
    expect((await send('/api/w', ip2)).headers.get('access-control-allow-origin')).toBeNull()
    const denied = await send('/api/w?cors', init)
    expect([denied.status, corsOf(denied)]).toEqual([429, { vary: 'Origin' }])
  })
})

describe('rateLimit({ cors }) in another Worker', () => {
  const limited = parseRules(
    {
      version: 1,
      rules: [{ id: 'lib-cors', key: ['ip'], algorithm: 'fixed-window', limit: 1, period: '1m' }],
    },
    'lib'
  )
  const app = new Hono<{ Bindings: RateLimitBindings }>()
  app.use('/api/*', rateLimit({ rules: limited, cors: [APP] }))
  app.get('/api/thing', (c) => {
    c.header('Access-Control-Allow-Origin', APP)
    c.header('Access-Control-Expose-Headers', 'X-Own, ETag')
    return c.text('thing')
  })
  const get = (ip: string) =>
    app.request('/api/thing', { headers: { origin: APP, 'cf-connecting-ip': ip } }, env)

  it("keeps the app's exposed headers and adds the limiter's; its 429 carries CORS too", async () => {
    const allowed = await get('192.0.2.31')
    expect(corsOf(allowed)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-expose-headers': `X-Own, ETag, ${EXPOSED}`,
      vary: 'Origin',
    })
    const denied = await get('192.0.2.31')
    expect(denied.status).toBe(429)
    expect(denied.headers.get('access-control-allow-origin')).toBe(APP)
  })

  it('refuses an origin it could never match, when the middleware is made', () => {
    expect(() => rateLimit({ rules: limited, cors: ['https://app.example/'] })).toThrow(
      new TypeError(
        'rateLimit(): cors: "https://app.example/" is not an origin as browsers send it (https://app.example.com)'
      )
    )
  })

  it('overrides CORS_ORIGINS', async () => {
    const off = new Hono<{ Bindings: RateLimitBindings }>()
    off.use(rateLimit({ rules: limited, cors: 'off' }))
    off.get('/', (c) => c.text('ok'))
    const headers = { origin: APP, 'cf-connecting-ip': '192.0.2.32' }
    const vars = { ...env, CORS_ORIGINS: '*' }
    expect(corsOf(await off.request('/', { headers }, vars))).toEqual({})
    expect(corsOf(await off.request('/', { headers }, vars))).toEqual({})
  })
})
