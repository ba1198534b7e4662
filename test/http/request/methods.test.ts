import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { RULES_KV_KEY } from '../../../src/provider/rules-source'
import { client, rules } from '../../support/http'

const getOnly = rules({
  id: 'reads',
  match: { path: '/r/*', methods: ['GET'] },
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 2,
  period: '1h',
})

const byMethod = rules({
  id: 'per-method',
  match: { path: '/m/*' },
  key: ['ip', 'method'],
  algorithm: 'sliding-window',
  limit: 2,
  period: '1h',
})

describe('method rules through HTTP', () => {
  const send = client({ rules: getOnly }, { ORIGIN: 'demo' })

  it('counts HEAD wherever GET counts', async () => {
    const ip = '198.51.100.1'
    expect((await send('/r/a', { ip })).status).toBe(200)
    expect((await send('/r/a', { method: 'HEAD', ip })).status).toBe(200)
    const third = await send('/r/a', { method: 'HEAD', ip })
    expect(third.status).toBe(429)
    expect(third.headers.get('x-demo-origin')).toBeNull()
  })

  it('counts HEAD under the bundled rule with methods ["GET", "POST"]', async () => {
    await env.RULES.delete(RULES_KV_KEY)
    const bundled = client({}, { ORIGIN: 'demo' })
    const statuses: number[] = []
    for (let i = 0; i < 11; i++)
      statuses.push((await bundled('/api/x', { method: 'HEAD', ip: '198.51.100.2' })).status)
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200))
    expect(statuses[10]).toBe(429)
  })

  it.each([
    ['X-HTTP-Method-Override', { 'x-http-method-override': 'GET' }, '', '198.51.100.11'],
    ['X-HTTP-Method', { 'x-http-method': 'get' }, '', '198.51.100.12'],
    ['X-Method-Override', { 'x-method-override': ' Get ' }, '', '198.51.100.13'],
    ['?_method=', {}, '?_method=GET', '198.51.100.14'],
    ['?%5Fmethod=', {}, '?%5Fmethod=GET', '198.51.100.15'],
    ['a repeated header', { 'x-http-method-override': 'GET, GET' }, '', '198.51.100.16'],
    // Spellings PHP/CGI and WSGI read as X-HTTP-Method-Override: `_` for `-`, mixed, any punctuation.
    ['X_HTTP_Method_Override', { x_http_method_override: 'GET' }, '', '198.51.100.17'],
    ['X-HTTP_Method-Override', { 'x-http_method-override': 'GET' }, '', '198.51.100.18'],
    ['X.HTTP.Method', { 'x.http.method': 'GET' }, '', '198.51.100.19'],
  ])('counts a POST overridden to GET by %s as GET', async (_label, headers, query, ip) => {
    const post = () => send(`/r/a${query}`, { method: 'POST', headers, ip })
    expect((await send('/r/a', { ip })).status).toBe(200)
    expect((await post()).status).toBe(200)
    const third = await post()
    expect(third.status).toBe(429)
    expect(third.headers.get('x-demo-origin')).toBeNull()
  })

  it('does not count a POST whose override names no method a rule can match', async () => {
    const ip = '198.51.100.30'
    for (let i = 0; i < 3; i++) {
      const response = await send('/r/a', {
        method: 'POST',
        headers: { 'x-http-method-override': 'FETCH' },
        ip,
      })
      expect(response.status).toBe(200)
    }
  })

  it('refuses with 400 a request naming two different override methods, forwarding nothing', async () => {
    for (const [headers, query] of [
      [{ 'x-http-method-override': 'GET', 'x-http-method': 'DELETE' }, ''],
      [{ 'x-http-method-override': 'GET, PUT' }, ''],
      [{ 'x-method-override': 'PATCH' }, '?_method=GET'],
    ] as const) {
      const response = await send(`/r/a${query}`, { method: 'POST', headers, ip: '198.51.100.31' })
      expect(response.status).toBe(400)
      expect(response.headers.get('x-demo-origin')).toBeNull()
      expect(await response.json()).toMatchObject({
        detail: expect.stringContaining('two methods to override with'),
      })
    }
  })

  it('keys a method rule by the overriding method, with HEAD as GET', async () => {
    const keyed = client({ rules: byMethod }, { ORIGIN: 'demo' })
    const ip = '198.51.100.32'
    expect((await keyed('/m/a', { ip })).status).toBe(200)
    expect((await keyed('/m/a', { method: 'HEAD', ip })).status).toBe(200)
    const overridden = await keyed('/m/a', {
      method: 'PUT',
      headers: { 'x-http-method': 'GET' },
      ip,
    })
    expect(overridden.status).toBe(429)
    expect((await keyed('/m/a', { method: 'PUT', ip })).status).toBe(200)
  })
})

describe('POST /explain with method overrides', () => {
  const send = client({ rules: getOnly }, { ADMIN_TOKEN: 'explain-token' })
  const explain = async (headers: Record<string, string>) =>
    (
      await send('/__ratelimit/explain', {
        method: 'POST',
        headers: { authorization: 'Bearer explain-token' },
        body: JSON.stringify({ method: 'POST', url: 'https://h.test/r/a', headers, ip: '1.2.3.4' }),
      })
    ).json()

  it('explains them as the limiter counts them', async () => {
    expect(await explain({ 'x-http-method-override': 'GET' })).toMatchObject({
      rules: [{ rule: 'reads', applies: true }],
    })
    expect(await explain({ 'x-http-method-override': 'GET', 'x-http-method': 'PUT' })).toEqual({
      outcome: 400,
      reason: 'The request names two methods to override with (GET, PUT).',
    })
  })
})

describe('METHOD_OVERRIDE=strip', () => {
  const send = client({ rules: getOnly }, { ORIGIN: env.TEST_ORIGIN, METHOD_OVERRIDE: 'strip' })
  type Echo = { method: string; url: string; headers: Record<string, string> }

  it('counts the request by its own method, and the origin sees no override', async () => {
    const ip = '198.51.100.40'
    for (let i = 0; i < 4; i++) {
      const response = await send('/r/a?b=a%20b&_method=GET&%5Fmethod=GET&c=%2F', {
        method: 'POST',
        headers: {
          'x-http-method-override': 'GET',
          'x-http-method': 'GET',
          'x-method-override': 'GET',
          x_http_method_override: 'GET',
          'X_Method.Override': 'GET',
          'x-kept': 'yes',
          x_kept_too: 'yes',
        },
        ip,
      })
      expect(response.status).toBe(200)
      const echo = (await response.json()) as Echo
      expect(echo.method).toBe('POST')
      expect(echo.url).toBe('/r/a?b=a%20b&c=%2F')
      expect(Object.keys(echo.headers)).not.toContain('x-http-method-override')
      expect(Object.keys(echo.headers)).not.toContain('x-http-method')
      expect(Object.keys(echo.headers)).not.toContain('x-method-override')
      expect(Object.keys(echo.headers)).not.toContain('x_http_method_override')
      expect(Object.keys(echo.headers)).not.toContain('x_method.override')
      expect(echo.headers).toMatchObject({ 'x-kept': 'yes', x_kept_too: 'yes' })
    }
  })

  it('forwards a request without overrides exactly as it came', async () => {
    const response = await send('/r/a?x=%2F&_methods=1&y', { method: 'POST', ip: '198.51.100.41' })
    expect(((await response.json()) as Echo).url).toBe('/r/a?x=%2F&_methods=1&y')
  })
})
