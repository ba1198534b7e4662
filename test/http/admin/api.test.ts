import { env } from 'cloudflare:workers'
import { beforeEach, describe, expect, it } from 'vitest'
import { RULES_KV_KEY } from '../../../src/provider/rules-source'
import { parseRules } from '../../../src/rules'
import { client } from '../../support/http'

const TOKEN = 'admin-test-token'
const auth = { authorization: `Bearer ${TOKEN}` }
const doc = (limit: number) => ({
  version: 1,
  rules: [
    { id: 'per-ip', key: ['ip'], algorithm: 'sliding-window', limit, period: '1h' },
    {
      id: 'per-tenant',
      key: ['header:x-tenant', 'query:region'],
      algorithm: 'token-bucket',
      limit: 5,
      period: '1m',
    },
  ],
})

describe('admin API', () => {
  beforeEach(async () => {
    await env.RULES.delete(RULES_KV_KEY)
  })

  const admin = client({}, { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' })

  it('is disabled, not forwarded, and not revealed without ADMIN_TOKEN', async () => {
    const disabled = client({}, { ADMIN_TOKEN: '', ORIGIN: 'demo' })
    for (const path of ['/__ratelimit', '/__ratelimit/rules', '/__RATELIMIT/rules']) {
      const response = await disabled(path)
      expect(response.status).toBe(404)
      expect(response.headers.get('x-demo-origin')).toBeNull()
      expect(response.headers.get('www-authenticate')).toBeNull()
      const text = await response.text()
      expect(text).toContain('Nothing is served at this path.')
      expect(text).not.toMatch(/admin|token|ratelimit/i)
    }
  })

  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer nope' }],
    ['a token with a suffix', { authorization: `Bearer ${TOKEN}x` }],
    ['basic auth', { authorization: `Basic ${btoa(`admin:${TOKEN}`)}` }],
  ])('answers 401 to %s, without forwarding', async (_label, headers) => {
    const response = await admin('/__ratelimit/rules', { headers })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect(response.headers.get('x-demo-origin')).toBeNull()
  })

  it('GET /rules shows the document in force', async () => {
    const response = await admin('/__ratelimit/rules', { headers: auth })
    expect(response.status).toBe(200)
    const body = (await response.json()) as {
      source: string
      document: { rules: { id: string }[] }
    }
    expect(body.source).toBe('rules.json')
    expect(body.document.rules.map((r) => r.id)).toEqual([
      'api-per-ip',
      'api-key-burst',
      'login-failures',
    ])
  })

  it('PUT /rules validates, writes KV, and is in force in this isolate at once', async () => {
    const put = await admin('/__ratelimit/rules', {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify(doc(3)),
    })
    expect(put.status).toBe(200)
    expect(await env.RULES.get(RULES_KV_KEY)).toBe(JSON.stringify(doc(3)))
    const limited = await admin('/anything', { ip: '203.0.113.200' })
    expect(limited.headers.get('RateLimit-Policy')).toBe('"per-ip";q=3;w=3600')
  })

  it('PUT /rules with a bad document is a 400 listing every error, and changes nothing', async () => {
    const bad = {
      version: 1,
      rules: [{ id: 'x', key: ['ip'], algorithm: 'sliding-window', limit: 0, period: '1x' }],
    }
    const response = await admin('/__ratelimit/rules', {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify(bad),
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({
      errors: [
        'rules[0].limit: 0 must be at least 1',
        'rules[0].period: "1x" is not a duration (use "10s", "1m", "1h", "1d" or seconds, up to 365d)',
      ],
    })
    expect(await env.RULES.get(RULES_KV_KEY)).toBeNull()
    const malformed = await admin('/__ratelimit/rules', {
      method: 'PUT',
      headers: auth,
      body: '{"version": 1,',
    })
    expect(malformed.status).toBe(400)
  })

  it('refuses oversized bodies with 413', async () => {
    const huge = 'x'.repeat(1024 * 1024 + 1)
    expect(
      (await admin('/__ratelimit/rules', { method: 'PUT', headers: auth, body: huge })).status
    ).toBe(413)
    expect(
      (await admin('/__ratelimit/explain', { method: 'POST', headers: auth, body: huge })).status
    ).toBe(413)
  })

  it('GET /keys shows a key without charging it; DELETE resets it', async () => {
    const send = client({ rules: parseRules(doc(10), 't') }, { ADMIN_TOKEN: TOKEN })
    await send('/x', { ip: '2001:db8:7:7::1' })
    await send('/x', { ip: '2001:db8:7:7::2' })
    const look = async () =>
      (await send('/__ratelimit/keys/per-ip/2001:db8:7:7::99', { headers: auth })).json()
    expect(await look()).toMatchObject({
      rule: 'per-ip',
      key: 'per-ip|2001%3Adb8%3A7%3A7%3A%3A%2F64',
      remaining: 8,
      limit: 10,
    })
    expect(await look()).toMatchObject({ remaining: 8 })
    const reset = await send('/__ratelimit/keys/per-ip/2001:db8:7:7::99', {
      method: 'DELETE',
      headers: auth,
    })
    expect(await reset.json()).toMatchObject({ reset: true })
    expect(await look()).toMatchObject({ remaining: 10 })
  })

  it('GET /keys spells a path value the way requests are, so any spelling finds the key', async () => {
    const rules = {
      version: 1,
      rules: [{ id: 'per-path', key: ['path'], algorithm: 'fixed-window', limit: 5, period: '1h' }],
    }
    const send = client({ rules: parseRules(rules, 't') }, { ADMIN_TOKEN: TOKEN })
    await send('/Login.json', { ip: '198.51.100.80' })
    const look = await send('/__ratelimit/keys/per-path/%2Flogin%3Bx%2F', { headers: auth })
    expect(await look.json()).toMatchObject({ key: 'per-path|%2Flogin', remaining: 4 })
    const bad = await send('/__ratelimit/keys/per-path/%2Fa%2500', { headers: auth })
    expect(bad.status).toBe(400)
  })

  it('names what is wrong with a key path', async () => {
    const send = client({ rules: parseRules(doc(10), 't') }, { ADMIN_TOKEN: TOKEN })
    const unknown = await send('/__ratelimit/keys/ghost/1.2.3.4', { headers: auth })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ detail: 'No rule has the id "ghost".' })
    const parts = await send('/__ratelimit/keys/per-tenant/acme', { headers: auth })
    expect(parts.status).toBe(400)
    expect(await parts.json()).toMatchObject({
      detail: 'Rule "per-tenant" has 2 key part(s); the path gives 1.',
    })
    expect(
      (await send('/__ratelimit/keys/per-ip/1.2.3.4', { method: 'POST', headers: auth })).status
    ).toBe(405)
    expect((await send('/__ratelimit/nothing', { headers: auth })).status).toBe(404)
  })

  it('POST /explain says which rules match, their keys, and what each would decide, charging nothing', async () => {
    const send = client({ rules: parseRules(doc(1), 't') }, { ADMIN_TOKEN: TOKEN })
    await send('/x', { ip: '198.51.100.77' })
    const body = {
      method: 'get',
      url: 'https://api.example.com/x?region=eu',
      headers: { 'x-tenant': 'acme' },
      ip: '198.51.100.77',
    }
    const explainIt = async () =>
      (
        await send('/__ratelimit/explain', {
          method: 'POST',
          headers: auth,
          body: JSON.stringify(body),
        })
      ).json()
    const first = await explainIt()
    expect(first).toMatchObject({
      outcome: 429,
      rules: [
        {
          rule: 'per-ip',
          applies: true,
          key: 'per-ip|198.51.100.77',
          remaining: 0,
          wouldAllow: false,
        },
        {
          rule: 'per-tenant',
          applies: true,
          key: 'per-tenant|acme|eu',
          remaining: 5,
          wouldAllow: true,
        },
      ],
    })
    // Nothing was charged: the same answer again (a never-charged bucket's reset is always "now").
    const withoutReset = (result: { rules: Record<string, unknown>[] }) =>
      result.rules.map(({ resetAt: _resetAt, ...rest }) => rest)
    expect(withoutReset((await explainIt()) as never)).toEqual(withoutReset(first as never))
    const anonymous = await (
      await send('/__ratelimit/explain', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ url: 'https://h.test/', ip: '198.51.100.78' }),
      })
    ).json()
    expect(anonymous).toMatchObject({
      outcome: 'origin',
      rules: [
        { rule: 'per-ip', wouldAllow: true },
        { rule: 'per-tenant', applies: false, why: 'a key part is absent' },
      ],
    })
  })

  it('POST /explain gives every matching rule in document order, and why one is not charged', async () => {
    const rule = (id: string, key: string[], fields: Record<string, unknown> = {}) => ({
      id,
      key,
      algorithm: 'sliding-window',
      limit: 5,
      period: '1m',
      ...fields,
    })
    const rules = parseRules(
      {
        version: 1,
        rules: [
          rule('per-ip', ['ip']),
          rule('elsewhere', ['ip'], { match: { path: '/other' } }),
          rule('dark', ['query:k'], { shadow: true }),
          rule('by-key', ['header:x-api-key']),
          rule('by-country', ['cf:country'], { replaces: ['per-ip'] }),
        ],
      },
      't'
    )
    const send = client({ rules }, { ADMIN_TOKEN: TOKEN })
    const response = await send('/__ratelimit/explain', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: 'https://h.test/x?k=1&k=2', ip: '198.51.100.79', country: 'nl' }),
    })
    const result = (await response.json()) as { rules: unknown[] }
    expect(result).toMatchObject({
      outcome: 'origin',
      rules: [
        { rule: 'per-ip', applies: false, why: 'replaced by another rule' },
        { rule: 'dark', applies: false, why: 'the request is ambiguous for it' },
        { rule: 'by-key', applies: false, why: 'a key part is absent' },
        { rule: 'by-country', applies: true, key: 'by-country|NL', wouldAllow: true },
      ],
    })
    expect(result.rules).toHaveLength(4)
  })

  it('POST /explain rejects a malformed description with every problem', async () => {
    const send = client({ rules: parseRules(doc(1), 't') }, { ADMIN_TOKEN: TOKEN })
    const response = await send('/__ratelimit/explain', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: 'not a url', extra: 1 }),
    })
    expect(response.status).toBe(400)
    const { errors } = (await response.json()) as { errors: string[] }
    expect(errors).toContain('url: url must be an absolute URL')
    expect(errors.some((e) => e.includes('extra'))).toBe(true)
    const notJson = await send('/__ratelimit/explain', {
      method: 'POST',
      headers: auth,
      body: 'nope',
    })
    expect(notJson.status).toBe(400)
  })
})

describe('admin API edges', () => {
  const send = client({ rules: parseRules(doc(10), 't') }, { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' })

  it.each(['//__ratelimit/rules', '/%5F_ratelimit/rules', '/__ratelimit%2Frules'])(
    'never forwards another spelling of the prefix (%s) to the origin',
    async (path) => {
      const response = await send(path, { headers: auth })
      expect(response.status).toBe(404)
      expect(response.headers.get('x-demo-origin')).toBeNull()
    }
  )

  it('answers 400, not 503, to a description with an invalid header or method', async () => {
    for (const body of [
      { url: 'https://h.test/', headers: { 'bad header': 'x' } },
      { url: 'https://h.test/', method: 'G ET' },
    ]) {
      const response = await send('/__ratelimit/explain', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(body),
      })
      expect(response.status).toBe(400)
    }
  })
})
