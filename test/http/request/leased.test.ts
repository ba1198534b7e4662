import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ClientStatsSnapshot } from '../../../src/limiter/calls/stats'
import { freezeClock } from '../../support/clock'
import { client, rules } from '../../support/http'

const HOUR = 3_600_000
const TOKEN = 'leased-test-token'

/** A global key under a leased sliding window, served through the app. */
function leasedApp(id: string, limit: number) {
  const send = client(
    {
      rules: rules({
        id,
        key: [],
        algorithm: 'sliding-window',
        limit,
        period: '1h',
        consistency: 'leased',
      }),
    },
    { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' }
  )
  const stats = async () => {
    const response = await send('/__ratelimit/stats', {
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    return ((await response.json()) as ClientStatsSnapshot).rules[id]
  }
  return { send, stats }
}

/** Stops the clock (objects included) just after an hour boundary, so no window ends. */
function startOfHour(): number {
  const startMs = Math.ceil(freezeClock() / HOUR) * HOUR + 1_000
  vi.setSystemTime(startMs)
  return startMs
}

describe('leased quotas through the Worker', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('admits exactly the limit of 500 concurrent requests, each with its headers', async () => {
    startOfHour()
    const { send } = leasedApp('leased-exact', 100)
    const responses = await Promise.all(
      Array.from({ length: 500 }, () => send('/x', { ip: '198.51.100.9' }))
    )
    const ok = responses.filter((r) => r.status === 200)
    const denied = responses.filter((r) => r.status === 429)
    expect(ok).toHaveLength(100)
    expect(denied).toHaveLength(400)
    for (const response of ok) {
      expect(response.headers.get('X-RateLimit-Limit')).toBe('100')
      const remaining = Number(response.headers.get('X-RateLimit-Remaining'))
      expect(remaining).toBeGreaterThanOrEqual(0)
      expect(remaining).toBeLessThan(100)
    }
    for (const response of denied) {
      expect(response.headers.get('X-RateLimit-Remaining')).toBe('0')
      expect(Number(response.headers.get('Retry-After'))).toBeGreaterThan(0)
    }
  })

  it('decides a hot key in the isolate: few Durable Object calls, remaining counting down', async () => {
    let nowMs = startOfHour()
    const { send, stats } = leasedApp('leased-hot', 10_000)
    const remaining: number[] = []
    for (let i = 0; i < 400; i++) {
      vi.setSystemTime((nowMs += 2))
      const response = await send('/x', { ip: '198.51.100.10' })
      expect(response.status).toBe(200)
      remaining.push(Number(response.headers.get('X-RateLimit-Remaining')))
    }
    // Approximate with several isolates (see docs/scale.md); exact where one spends alone.
    expect(remaining).toEqual(remaining.map((_, i) => 10_000 - 1 - i))
    const counted = await stats()
    expect(counted!.decisions.local + counted!.decisions.durableObject).toBe(400)
    expect(counted!.durableObjectCalls / 400).toBeLessThanOrEqual(0.05)
  })

  it('forgets what the isolate leased when an admin resets the key', async () => {
    let nowMs = startOfHour()
    const { send } = leasedApp('leased-reset', 100)
    const admitted = async (count: number) => {
      let ok = 0
      for (let i = 0; i < count; i++) {
        vi.setSystemTime((nowMs += 2))
        if ((await send('/x', { ip: '198.51.100.11' })).status === 200) ok++
      }
      return ok
    }
    expect(await admitted(40)).toBe(40)
    const reset = await send('/__ratelimit/keys/leased-reset', {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    expect(reset.status).toBe(200)
    // A fresh quota, and nothing leased before the reset spent on top of it.
    expect(await admitted(150)).toBe(100)
  })
})
