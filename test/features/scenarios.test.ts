import { DEMO_PASSWORD } from '../../src/http/request/demo-origin'
import { afterEach, describe, expect, it, vi } from 'vitest'
import scenarios from '../../examples/scenarios.json'
import { parseRules } from '../../src/rules'
import { freezeClock } from '../support/clock'
import { client, parseRateLimit } from '../support/http'

const send = client({ rules: parseRules(scenarios, 'examples/scenarios.json') })

/** Sends `count` requests and returns their statuses. */
async function statuses(count: number, path: string, init: Parameters<typeof send>[1]) {
  const codes: number[] = []
  for (let i = 0; i < count; i++) codes.push((await send(path, init)).status)
  return codes
}

const allowedThenDenied = (allowed: number, denied: number) => [
  ...Array<number>(allowed).fill(200),
  ...Array<number>(denied).fill(429),
]

describe('common scenarios (examples/scenarios.json)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('2 posts per second per user', async () => {
    const post = { method: 'POST', ip: '192.0.2.1', headers: { 'x-user-id': 'u1' } }
    expect(await statuses(3, '/posts', post)).toEqual(allowedThenDenied(2, 1))
    const other = { method: 'POST', ip: '192.0.2.1', headers: { 'x-user-id': 'u2' } }
    expect(await statuses(1, '/posts', other)).toEqual([200])
  })

  it('10 accounts per day per IP', async () => {
    expect(await statuses(11, '/accounts', { method: 'POST', ip: '192.0.2.2' })).toEqual(
      allowedThenDenied(10, 1)
    )
    const denied = await send('/accounts', { method: 'POST', ip: '192.0.2.2' })
    expect(Number(denied.headers.get('Retry-After'))).toBeGreaterThan(3_600)
  })

  it('5 rewards per week per device', async () => {
    const claim = { method: 'POST', ip: '192.0.2.3', headers: { 'x-device-id': 'phone-1' } }
    expect(await statuses(6, '/rewards/daily', claim)).toEqual(allowedThenDenied(5, 1))
    const policy = (await send('/rewards/daily', claim)).headers.get('RateLimit-Policy')
    expect(policy).toBe('"rewards-per-device";q=5;w=604800')
  })

  it('1000 requests per hour per IP, with X-RateLimit-Remaining and X-RateLimit-Reset', async () => {
    const nowMs = freezeClock()
    const first = await send('/draws/today', { ip: '192.0.2.4' })
    expect(first.headers.get('X-RateLimit-Limit')).toBe('1000')
    expect(first.headers.get('X-RateLimit-Remaining')).toBe('999')
    // The sliding window's quota is whole again two windows after the current one started.
    const hourStartMs = Math.floor(nowMs / 3_600_000) * 3_600_000
    expect(first.headers.get('X-RateLimit-Reset')).toBe(String((hourStartMs + 7_200_000) / 1000))
    await Promise.all(Array.from({ length: 999 }, () => send('/draws/today', { ip: '192.0.2.4' })))
    const over = await send('/draws/today', { ip: '192.0.2.4' })
    expect(over.status).toBe(429)
    expect(over.headers.get('X-RateLimit-Remaining')).toBe('0')
  })

  it.each([
    ['free', 100],
    ['paid', 1000],
    ['enterprise', 10000],
    [undefined, 100],
  ])('free/paid/enterprise tiers per hour: %s gets %i', async (plan, quota) => {
    const headers: Record<string, string> = { 'x-api-key': `key-${plan}` }
    if (plan) headers['x-plan'] = plan
    const response = await send('/v1/things', { ip: '192.0.2.5', headers })
    expect(response.headers.get('RateLimit-Policy')).toBe(`"api-tiers";q=${quota};w=3600`)
    expect(parseRateLimit(response.headers.get('RateLimit'))['api-tiers']?.r).toBe(quota - 1)
  })

  it('5 logins per minute, then a 15-minute lock', async () => {
    freezeClock()
    // Every attempt counts here, successful ones too.
    const login = { method: 'POST', ip: '192.0.2.6', headers: { 'x-password': DEMO_PASSWORD } }
    expect(await statuses(7, '/login', login)).toEqual(allowedThenDenied(5, 2))
    const locked = await send('/login', login)
    expect(locked.headers.get('Retry-After')).toBe(String(15 * 60))
  })

  it('1000 writes per second across all clients: one counter for everyone', async () => {
    freezeClock() // both requests in the same second
    const a = await send('/writes/orders', { method: 'POST', ip: '192.0.2.7' })
    const b = await send('/writes/orders', { method: 'PUT', ip: '198.51.100.7' })
    const before = parseRateLimit(a.headers.get('RateLimit'))['writes-global']!.r
    const after = parseRateLimit(b.headers.get('RateLimit'))['writes-global']!.r
    expect(a.headers.get('RateLimit-Policy')).toBe('"writes-global";q=1000;w=1')
    expect([before, after]).toEqual([999, 998])
    expect(
      (await send('/writes/orders', { method: 'GET', ip: '192.0.2.7' })).headers.get('RateLimit')
    ).toBeNull()
  })
})
