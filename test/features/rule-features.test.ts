import { DEMO_PASSWORD } from '../../src/http/request/demo-origin'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseRules } from '../../src/rules'
import { freezeClock } from '../support/clock'
import { client, parseRateLimit } from '../support/http'

const document = (fields: Record<string, unknown>) => parseRules({ version: 1, ...fields }, 'test')
const rule = (id: string, fields: Record<string, unknown> = {}) => ({
  id,
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 2,
  period: '1h',
  ...fields,
})

describe('allow and deny lists, and the kill switch', () => {
  const lists = {
    allow: { ips: ['192.0.2.0/24'] },
    deny: {
      ips: ['198.51.100.0/24', '2001:db8:bad::/48'],
      headers: { 'user-agent': ['BadBot/1.0'] },
    },
  }
  const send = client({ rules: document({ rules: [rule('lists')], lists }) })

  it('refuses a deny-listed client with a 403 problem that does not say what matched', async () => {
    for (const init of [
      { ip: '198.51.100.9' },
      { ip: '2001:db8:bad:1::1' },
      { ip: '203.0.113.1', headers: { 'user-agent': 'BadBot/1.0' } },
    ]) {
      const response = await send('/x', init)
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      expect(await response.json()).toEqual({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: 'This client may not use this service.',
      })
    }
  })

  it('lets an allow-listed client skip limiting', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await send('/x', { ip: '192.0.2.50' })
      expect(response.status).toBe(200)
      expect(response.headers.get('RateLimit')).toBeNull()
    }
  })

  it('enforces nothing with mode "off"', async () => {
    const off = client({ rules: document({ mode: 'off', rules: [rule('off')], lists }) })
    for (let i = 0; i < 4; i++) expect((await off('/x', { ip: '198.51.100.9' })).status).toBe(200)
  })
})

describe('shadow mode', () => {
  it('counts and logs "would deny" but never blocks, and sends no headers by default', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const send = client({ rules: document({ rules: [rule('dark', { shadow: true })] }) })
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const response = await send('/x', { ip: '203.0.113.20' })
      statuses.push(response.status)
      expect(response.headers.get('RateLimit')).toBeNull()
    }
    expect(statuses).toEqual([200, 200, 200, 200])
    const wouldDeny = warn.mock.calls.map(([line]) => JSON.parse(String(line)))
    expect(
      wouldDeny.filter((e) => e.event === 'rate-limit-would-deny' && e.rule === 'dark')
    ).toHaveLength(2)
    warn.mockRestore()
  })

  it('shows shadow rules in headers with shadowHeaders, and shadows everything with mode "shadow"', async () => {
    const send = client({
      rules: document({
        mode: 'shadow',
        shadowHeaders: true,
        rules: [rule('all-dark')],
        lists: { deny: { ips: ['203.0.113.21'] } },
      }),
    })
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    for (let i = 0; i < 3; i++) expect((await send('/x', { ip: '203.0.113.21' })).status).toBe(200)
    const last = await send('/x', { ip: '203.0.113.21' })
    expect(parseRateLimit(last.headers.get('RateLimit'))).toMatchObject({ 'all-dark': { r: 0 } })
    expect(warn.mock.calls.some(([line]) => String(line).includes('deny-list-would-deny'))).toBe(
      true
    )
    warn.mockRestore()
  })
})

describe('cost', () => {
  const send = client({
    rules: document({
      rules: [
        rule('units', { limit: 10, cost: { header: 'x-cost', max: 5 } }),
        rule('heavy', { limit: 9, cost: 3, match: { path: '/export' } }),
      ],
    }),
  })

  it("charges the header's units, and a constant per rule", async () => {
    const response = await send('/x', { ip: '203.0.113.30', headers: { 'x-cost': '4' } })
    expect(parseRateLimit(response.headers.get('RateLimit'))).toMatchObject({ units: { r: 6 } })
    const exported = await send('/export', { ip: '203.0.113.31' })
    expect(parseRateLimit(exported.headers.get('RateLimit'))).toMatchObject({
      heavy: { r: 6 },
      units: { r: 9 },
    })
  })

  let host = 100
  it.each(['-1', '1e309', 'abc', '6', '0'])(
    'answers 400 for a cost header of %j and charges nothing',
    async (value) => {
      const ip = `203.0.113.${host++}`
      const response = await send('/x', { ip, headers: { 'x-cost': value } })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({
        status: 400,
        rule: 'units',
        detail: `The x-cost header must be a whole number from 1 to 5, not ${JSON.stringify(value)}. Rule "units" reads header:x-cost.`,
      })
      const after = await send('/x', { ip })
      expect(parseRateLimit(after.headers.get('RateLimit')).units?.r).toBe(9)
    }
  )
})

describe('penalty box', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('5 logins per minute, then 15 minutes locked, with Retry-After saying so', async () => {
    freezeClock()
    const send = client({
      rules: document({
        rules: [
          rule('login', {
            limit: 5,
            period: '1m',
            penalty: '15m',
            match: { path: '/login', methods: ['POST'] },
          }),
        ],
      }),
    })
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 7; i++) {
      last = await send('/login', {
        method: 'POST',
        ip: '203.0.113.40',
        headers: { 'x-password': DEMO_PASSWORD },
      })
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429])
    expect(last!.headers.get('Retry-After')).toBe(String(15 * 60))
  })
})

describe('overrides', () => {
  /** A new app: 2 an hour per IP, but 100 for the API key "acme", which replaces the per-IP rule. */
  const acmeOverride = () =>
    client({
      rules: document({
        rules: [
          rule('api-per-ip', { limit: 2 }),
          rule('acme', {
            match: { headers: { 'x-api-key': ['acme'] } },
            key: ['header:x-api-key'],
            limit: 100,
            replaces: ['api-per-ip'],
          }),
        ],
      }),
    })

  it('one customer gets a higher limit, counted once, instead of the generic rule', async () => {
    const send = acmeOverride()
    for (let i = 0; i < 5; i++) {
      const response = await send('/x', { ip: '203.0.113.50', headers: { 'x-api-key': 'acme' } })
      expect(response.status).toBe(200)
      expect(Object.keys(parseRateLimit(response.headers.get('RateLimit')))).toEqual(['acme'])
    }
    expect((await send('/x', { ip: '203.0.113.50' })).status).toBe(200)
    expect((await send('/x', { ip: '203.0.113.50' })).status).toBe(200)
    expect((await send('/x', { ip: '203.0.113.50' })).status).toBe(429)
  })

  it('at the per-IP limit, no invented API key gets through', async () => {
    const send = acmeOverride()
    const ip = '203.0.113.51'
    expect((await send('/x', { ip })).status).toBe(200)
    expect((await send('/x', { ip })).status).toBe(200)
    for (let i = 1; i <= 10; i++) {
      const headers = { 'x-api-key': `junk${i}` }
      expect((await send('/x', { ip, headers })).status).toBe(429)
    }
    // Nor the listed key under a second spelling next to a junk one: the origin may read either.
    const both = { 'x-api-key': 'junk', x_api_key: 'acme' }
    expect((await send('/x', { ip, headers: both })).status).toBe(400)
    expect((await send('/x', { ip, headers: { 'x-api-key': 'acme' } })).status).toBe(200)
  })

  it('refuses a rules document whose replacing rule is keyed on a value the client invents', () => {
    expect(() =>
      document({
        rules: [
          rule('api-per-ip'),
          rule('per-key', { key: ['header:x-api-key'], replaces: ['api-per-ip'] }),
        ],
      })
    ).toThrowError(/rules\[1\]\.replaces: the key part "header:x-api-key" is chosen by the client/)
  })
})
