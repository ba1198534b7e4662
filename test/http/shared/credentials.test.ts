import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { parseRules } from '../../../src/rules'
import { client, rules } from '../../support/http'

const ADMIN = 'admin-secret-0123456789'
const DECISION = 'decision-secret-0123456789'
const secrets = { ADMIN_TOKEN: ADMIN, DECISION_TOKEN: DECISION }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const open = rules({
  id: 'open',
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 1000,
  period: '1h',
})
const envoy = parseRules(
  {
    version: 1,
    rules: [],
    domains: [
      {
        domain: 'd',
        descriptors: [{ key: 'k', rate_limit: { unit: 'hour', requests_per_unit: 9 } }],
      },
    ],
  },
  'envoy'
)
const decision = JSON.stringify({
  domain: 'd',
  descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
})

type Echo = { url: string; headers: Record<string, string> }

describe('look-alike spellings of the admin prefix', () => {
  const send = client({ rules: open }, { ...secrets, ORIGIN: 'demo' })

  it.each([
    '/__RATELIMIT/rules',
    '/__RateLimit',
    '/__ratelimit;x/rules',
    '/__ratelimit./rules',
    '/__ratelimit%20/rules',
    '/%255F_ratelimit/rules',
    '/%5F%5FRATELIMIT%2Frules',
    '/x/..%252f__ratelimit/rules',
    '/\\__ratelimit/rules',
    '//__ratelimit/rules',
  ])('answers %s itself with a 404 that names nothing, with or without a token', async (path) => {
    for (const headers of [bearer(ADMIN), bearer('the-origins-own'), {}]) {
      const response = await send(path, { headers })
      expect(response.status).toBe(404)
      expect(response.headers.get('x-demo-origin')).toBeNull()
      const text = await response.text()
      expect(text).not.toMatch(/admin|token|ratelimit/i)
    }
  })

  it.each(['/__ratelimit%09/rules', '/__ratelimit%00/rules'])(
    'refuses %s with 400 (a control character), whatever the token, never forwarding it',
    async (path) => {
      for (const headers of [bearer(ADMIN), bearer('the-origins-own'), {}]) {
        const response = await send(path, { headers })
        expect(response.status).toBe(400)
        expect(response.headers.get('x-demo-origin')).toBeNull()
        expect(await response.text()).not.toContain(ADMIN)
      }
    }
  )

  it.each(['/__ratelimitx/rules', '/api/__ratelimit/rules', '/__rate_limit/rules', '/ratelimit'])(
    'forwards %s, which is another path',
    async (path) => {
      const response = await send(path)
      expect(response.headers.get('x-demo-origin')).toBe('1')
    }
  )

  it('follows ADMIN_PREFIX, over all its segments', async () => {
    const custom = client({ rules: open }, { ...secrets, ORIGIN: 'demo', ADMIN_PREFIX: '/ops/rl' })
    expect((await custom('/OPS/RL/rules')).status).toBe(404)
    expect((await custom('/ops;a/rl./rules')).status).toBe(404)
    expect((await custom('/ops/other')).headers.get('x-demo-origin')).toBe('1')
    expect((await custom('/__RATELIMIT/rules')).headers.get('x-demo-origin')).toBe('1')
  })
})

describe("the limiter's secrets never reach the origin", () => {
  const send = client({ rules: open }, { ...secrets, ORIGIN: env.TEST_ORIGIN })

  it.each([
    ['ADMIN_TOKEN', `Bearer ${ADMIN}`],
    ['DECISION_TOKEN', `Bearer ${DECISION}`],
    ['a lower-case scheme', `bearer ${ADMIN}`],
    ['extra spaces', `Bearer   ${DECISION}`],
    ['a repeated header', `Bearer someone-else, Bearer ${ADMIN}`],
  ])('refuses a request carrying %s with a 400 that does not echo it', async (_label, value) => {
    for (const path of ['/anything', '/json', '/api/x?y=1']) {
      const response = await send(path, { method: 'POST', headers: { authorization: value } })
      expect(response.status).toBe(400)
      const text = await response.text()
      expect(text).not.toContain(ADMIN)
      expect(text).not.toContain(DECISION)
      expect(text).toContain("rate limiter's own credentials")
    }
  })

  it.each([
    `Bearer ${ADMIN}x`,
    `Bearer x${DECISION}`,
    'Bearer the-origins-own',
    `Basic ${btoa('user:pass')}`,
  ])("passes the origin's own Authorization (%s) untouched", async (value) => {
    const response = await send('/anything', { headers: { authorization: value } })
    expect(response.status).toBe(200)
    expect(((await response.json()) as Echo).headers.authorization).toBe(value)
  })

  it('checks nothing when no secret is set', async () => {
    const unset = client({ rules: open }, { ADMIN_TOKEN: '', ORIGIN: env.TEST_ORIGIN })
    const response = await unset('/anything', { headers: bearer(ADMIN) })
    expect(response.status).toBe(200)
  })
})

describe('DECISION_TOKEN and ADMIN_TOKEN are separate', () => {
  const send = client({ rules: envoy }, { ...secrets, ORIGIN: 'demo' })

  it('/json takes only DECISION_TOKEN; the admin API only ADMIN_TOKEN', async () => {
    const json = (token: string) =>
      send('/json', { method: 'POST', headers: bearer(token), body: decision, ip: '192.0.2.1' })
    expect((await json(DECISION)).status).toBe(200)
    expect((await json(ADMIN)).status).toBe(401)
    const rulesAs = (token: string) =>
      send('/__ratelimit/rules', { headers: bearer(token), ip: '192.0.2.1' })
    expect((await rulesAs(ADMIN)).status).toBe(200)
    expect((await rulesAs(DECISION)).status).toBe(401)
  })
})

describe('wrong tokens are rate-limited per address', () => {
  const send = client({ rules: envoy }, { ...secrets, ORIGIN: 'demo' })
  const admin = (token: string | undefined, ip: string) =>
    send('/__ratelimit/rules', { headers: token === undefined ? {} : bearer(token), ip })

  it('answers 429 with Retry-After after 10 wrong admin tokens, even to the right one', async () => {
    const ip = '192.0.2.10'
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) statuses.push((await admin(`guess-${i}`, ip)).status)
    expect(statuses).toEqual(Array(10).fill(401))
    const locked = await admin('guess-10', ip)
    expect(locked.status).toBe(429)
    const retryAfter = Number(locked.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect((await admin(ADMIN, ip)).status).toBe(429)
    // Another address is not affected, nor is the /64 of another IPv6 client.
    expect((await admin(ADMIN, '192.0.2.11')).status).toBe(200)
  })

  it('counts an IPv6 client by its /64', async () => {
    for (let i = 0; i < 10; i++) await admin(`guess-${i}`, `2001:db8:5:5::${i + 1}`)
    expect((await admin(ADMIN, '2001:db8:5:5::ff')).status).toBe(429)
    expect((await admin(ADMIN, '2001:db8:5:6::1')).status).toBe(200)
  })

  it('does not count a right token, nor a request without one', async () => {
    const ip = '192.0.2.12'
    for (let i = 0; i < 12; i++) expect((await admin(ADMIN, ip)).status).toBe(200)
    for (let i = 0; i < 12; i++) expect((await admin(undefined, ip)).status).toBe(401)
    for (let i = 0; i < 9; i++) expect((await admin(`guess-${i}`, ip)).status).toBe(401)
    expect((await admin(ADMIN, ip)).status).toBe(200)
  })

  it('limits wrong tokens on /json too', async () => {
    const ip = '192.0.2.13'
    const json = (token: string) =>
      send('/json', { method: 'POST', headers: bearer(token), body: decision, ip })
    for (let i = 0; i < 10; i++) expect((await json(`guess-${i}`)).status).toBe(401)
    const locked = await json('guess-10')
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await json(DECISION)).status).toBe(429)
    expect(
      (
        await send('/json', {
          method: 'POST',
          headers: bearer(DECISION),
          body: decision,
          ip: '192.0.2.14',
        })
      ).status
    ).toBe(200)
  })
})
