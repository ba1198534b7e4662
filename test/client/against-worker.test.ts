import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from '../../src/app'
import { fetchWithRateLimit } from '../../src/client'
import { freezeClock } from '../support/clock'
import { rules } from '../support/http'

/** The limiter Worker, in workerd, as the client's `fetch`: one request a minute per address. */
const app = createApp({
  rules: rules({
    id: 'one-a-minute',
    match: { path: '/api/*' },
    key: ['ip'],
    algorithm: 'fixed-window',
    limit: 1,
    period: '1m',
  }),
})
async function worker(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext()
  const response = await app.fetch(new Request(input, init), { ...env, ORIGIN: 'demo' }, ctx)
  await waitOnExecutionContext(ctx)
  return response
}

/** A wait moves the frozen clock on instead of sleeping; the Worker and its objects see it. */
const sleep = async (ms: number) => {
  vi.setSystemTime(Date.now() + ms)
}

describe('fetchWithRateLimit against the limiter Worker', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('gets a 429, waits what Retry-After says, and the retry passes', async () => {
    const startMs = freezeClock()
    const headers = { 'cf-connecting-ip': '203.0.113.61' }
    expect((await worker('https://example.com/api/items', { headers })).status).toBe(200)
    const { response, waits } = await fetchWithRateLimit(
      'https://example.com/api/items',
      { headers },
      { fetch: worker, sleep, random: () => 0 }
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('x-demo-origin')).toBe('1')
    expect(waits).toHaveLength(1)
    const [wait] = waits
    // The fixed window ends at the next whole minute; Retry-After rounds up to whole seconds.
    const windowEndsMs = Math.floor(startMs / 60_000) * 60_000 + 60_000
    expect(wait).toEqual({
      attempt: 1,
      status: 429,
      waitMs: Math.ceil((windowEndsMs - startMs) / 1000) * 1000,
      hint: 'retry-after',
    })
    expect(Date.now() - startMs).toBe(wait!.waitMs)
  })

  it('does not retry a limited POST', async () => {
    freezeClock()
    const init = { method: 'POST', body: '{}', headers: { 'cf-connecting-ip': '203.0.113.62' } }
    expect((await worker('https://example.com/api/orders', init)).status).toBe(200)
    const slept: number[] = []
    const { response, waits } = await fetchWithRateLimit('https://example.com/api/orders', init, {
      fetch: worker,
      sleep: async (ms) => void slept.push(ms),
    })
    expect(response.status).toBe(429)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect([waits, slept]).toEqual([[], []])
  })

  it('returns the 429 when the wait asked for is over the budget', async () => {
    freezeClock()
    const headers = { 'cf-connecting-ip': '203.0.113.63' }
    expect((await worker('https://example.com/api/items', { headers })).status).toBe(200)
    const slept: number[] = []
    const { response, waits } = await fetchWithRateLimit(
      'https://example.com/api/items',
      { headers },
      { fetch: worker, sleep: async (ms) => void slept.push(ms), maxWaitMs: 500 }
    )
    expect(response.status).toBe(429)
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await response.json()) as { rule: string }).toMatchObject({ rule: 'one-a-minute' })
    expect([waits, slept]).toEqual([[], []])
  })
})
