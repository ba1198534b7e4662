import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../src/app'
import { DEMO_PASSWORD } from '../../src/http/request/demo-origin'
import { freezeClock } from '../support/clock'
import { parseRateLimit, rules } from '../support/http'

/** "5 failed logins per minute per account, then locked 15 minutes; successful logins not counted." */
const LOGIN_RULE = {
  id: 'login-failures',
  match: { path: '/login', methods: ['POST'] },
  key: ['header:x-account'],
  algorithm: 'sliding-window',
  limit: 5,
  period: '1m',
  penalty: '15m',
  countOn: { status: [401, 403] },
}

function setup(rule: Record<string, unknown>, origin = 'demo') {
  const app = createApp({ rules: rules(rule) })
  return async (path: string, init: RequestInit = {}) => {
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request(`https://example.com${path}`, { method: 'POST', ...init }),
      { ...env, ORIGIN: origin },
      ctx
    )
    await waitOnExecutionContext(ctx)
    return response
  }
}

const login = (account: string, password: string) => ({
  headers: { 'x-account': account, 'x-password': password, 'cf-connecting-ip': '203.0.113.9' },
})

afterEach(() => vi.useRealTimers())

describe('countOn: rules that count responses', () => {
  it('counts failed logins only, then locks the account for 15 minutes', async () => {
    const startMs = freezeClock()
    const send = setup(LOGIN_RULE)
    // Successful logins cost nothing.
    for (let i = 0; i < 8; i++)
      expect((await send('/login', login('ann', DEMO_PASSWORD))).status).toBe(200)
    const failures: number[] = []
    for (let i = 0; i < 5; i++) {
      const response = await send('/login', login('ann', 'wrong'))
      failures.push(response.status)
      // The headers show the failure just counted.
      expect(parseRateLimit(response.headers.get('RateLimit'))['login-failures']?.r).toBe(4 - i)
    }
    expect(failures).toEqual([401, 401, 401, 401, 401])
    // The sixth attempt is refused before the origin, even with the right password: locked.
    const locked = await send('/login', login('ann', DEMO_PASSWORD))
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('Retry-After'))).toBe(15 * 60)
    // Another account is untouched.
    expect((await send('/login', login('bob', DEMO_PASSWORD))).status).toBe(200)
    // Past the window but within the lock: still refused; after the lock: back.
    vi.setSystemTime(startMs + 5 * 60_000)
    expect((await send('/login', login('ann', DEMO_PASSWORD))).status).toBe(429)
    vi.setSystemTime(startMs + 15 * 60_000 + 61_000)
    expect((await send('/login', login('ann', DEMO_PASSWORD))).status).toBe(200)
  })

  it('counts status classes and ranges', async () => {
    freezeClock()
    const send = setup(
      {
        ...LOGIN_RULE,
        id: 'errors',
        match: { path: '/e' },
        key: ['ip'],
        penalty: undefined,
        limit: 2,
        countOn: { status: ['5xx', '429-429'] },
      },
      env.TEST_ORIGIN
    )
    const statuses = []
    for (const status of [200, 404, 503, 200, 429, 200, 500]) {
      statuses.push(
        (
          await send(`/e?status=${status}`, {
            method: 'GET',
            headers: { 'cf-connecting-ip': '198.51.100.4' },
          })
        ).status
      )
    }
    // 503 and 429 are counted (2 of 2); the next request is refused before the origin.
    expect(statuses).toEqual([200, 404, 503, 200, 429, 429, 429])
  })

  it("charges what the origin's cost header says, and keeps that header from the client", async () => {
    freezeClock()
    const send = setup({
      id: 'reported-cost',
      match: { path: '/report' },
      key: ['ip'],
      algorithm: 'token-bucket',
      limit: 10,
      period: '1h',
      countOn: { header: 'x-demo-origin' },
    })
    const headers = { 'cf-connecting-ip': '198.51.100.5' }
    // The demo origin answers `x-demo-origin: 1`: one unit per response, the header removed.
    const first = await send('/report', { method: 'GET', headers })
    expect(first.headers.get('x-demo-origin')).toBeNull()
    expect(parseRateLimit(first.headers.get('RateLimit'))['reported-cost']?.r).toBe(9)
  })

  it.each([
    // Without maxInFlight every request in flight may pass the check: up to limit + N − 1.
    [undefined, 5 + 200 - 1],
    // With maxInFlight m, at most m are between check and charge: up to limit + m − 1.
    [1, 5],
    [3, 5 + 3 - 1],
  ])(
    'bounds what reaches the origin past the limit under 200 concurrent failures (maxInFlight %s)',
    async (maxInFlight, bound) => {
      freezeClock()
      const account = `race-${maxInFlight ?? 'none'}`
      const send = setup({
        ...LOGIN_RULE,
        id: `race-${maxInFlight ?? 0}`,
        ...(maxInFlight ? { maxInFlight } : {}),
      })
      const statuses = await Promise.all(
        Array.from({ length: 200 }, () =>
          send('/login', login(account, 'wrong')).then((r) => r.status)
        )
      )
      const reached = statuses.filter((status) => status === 401).length
      expect(reached).toBeGreaterThanOrEqual(1)
      expect(reached).toBeLessThanOrEqual(bound)
      expect(statuses.every((status) => status === 401 || status === 429)).toBe(true)
      // Every failure that reached the origin was counted.
      const after = await send('/login', login(account, DEMO_PASSWORD))
      if (reached >= 5) expect(after.status).toBe(429)
      else
        expect(parseRateLimit(after.headers.get('RateLimit'))[`race-${maxInFlight}`]?.r).toBe(
          5 - reached
        )
    }
  )
})
