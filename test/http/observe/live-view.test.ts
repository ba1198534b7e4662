import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../../src/app'
import type { LiveView } from '../../../src/live'
import { rules } from '../../support/http'

const TOKEN = 'live-view-token'

describe('the live view in GET /__ratelimit/stats', () => {
  // Token buckets that refill 100 a day: no window boundary can fall inside the test.
  const app = createApp({
    rules: rules(
      {
        id: 'live-ip',
        match: { path: '/api/*' },
        key: ['ip'],
        algorithm: 'token-bucket',
        limit: 100,
        period: '24h',
      },
      {
        id: 'live-shadow',
        match: { path: '/shadow' },
        key: [],
        algorithm: 'token-bucket',
        limit: 1,
        period: '24h',
        shadow: true,
      },
      {
        id: 'live-hidden',
        match: { path: '/hidden' },
        key: ['header:x-api-key'],
        algorithm: 'token-bucket',
        limit: 1,
        period: '24h',
      }
    ),
  })
  const vars = { ...env, ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' }
  const send = async (path: string, headers: Record<string, string>) => {
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request(`https://example.com${path}`, { headers }),
      vars,
      ctx
    )
    await response.arrayBuffer()
    await waitOnExecutionContext(ctx)
    return response.status
  }
  /** A GET of an operator's path, with the admin token. */
  const asOperator = async (path: string) => {
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request(`https://example.com${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
      vars,
      ctx
    )
    await waitOnExecutionContext(ctx)
    return response
  }
  const live = async () => {
    const response = await asOperator('/__ratelimit/stats')
    expect(response.status).toBe(200)
    return ((await response.json()) as { live: LiveView }).live
  }

  it('counts 10,000 requests over 50 keys exactly, and lists the most limited keys first', async () => {
    // Key i is sent 102 + 4i requests (10,000 in all): 100 allowed, 2 + 4i limited.
    const queue: number[] = []
    for (let i = 0; i < 50; i++) for (let n = 0; n < 102 + 4 * i; n++) queue.push(i)
    // Interleaved (a fixed shuffle), so the order of the top keys comes from counts alone.
    for (let j = queue.length - 1; j > 0; j--) {
      const k = (j * 7919) % (j + 1)
      ;[queue[j], queue[k]] = [queue[k]!, queue[j]!]
    }
    const statuses = { allowed: 0, limited: 0 }
    let next = 0
    const worker = async () => {
      while (next < queue.length) {
        const i = queue[next++]!
        const status = await send('/api/x', { 'cf-connecting-ip': `10.0.0.${i}` })
        if (status === 200) statuses.allowed++
        else if (status === 429) statuses.limited++
      }
    }
    await Promise.all(Array.from({ length: 32 }, worker))
    expect(statuses).toEqual({ allowed: 5000, limited: 5000 })

    const view = await live()
    const ip = view.rules['live-ip']!
    expect([ip.allowed, ip.limited, ip.shadowLimited]).toEqual([5000, 5000, 0])
    const sum = (key: 'allowed' | 'limited') => ip.minutes.reduce((n, m) => n + m[key], 0)
    expect([sum('allowed'), sum('limited')]).toEqual([5000, 5000])
    expect(ip.minutes).toHaveLength(60)

    const top = view.topLimited.filter(({ rule }) => rule === 'live-ip')
    expect(top.map(({ key, count }) => [key, count])).toEqual(
      Array.from({ length: 50 }, (_, n) => [`live-ip|10.0.0.${49 - n}`, 2 + 4 * (49 - n)])
    )
    for (const { retryAfterMs } of top) expect(retryAfterMs).toBeGreaterThan(0)
  }, 60_000)

  it('counts what a rule in shadow would have limited, and lists no key for it', async () => {
    const statuses = []
    for (let n = 0; n < 3; n++) statuses.push(await send('/shadow', {}))
    expect(statuses).toEqual([200, 200, 200])
    const view = await live()
    const shadow = view.rules['live-shadow']!
    expect([shadow.allowed, shadow.limited, shadow.shadowLimited]).toEqual([1, 0, 2])
    expect(view.topLimited.some(({ rule }) => rule === 'live-shadow')).toBe(false)
  })

  it('shows only the hash of a key its rule hides (header keys by default)', async () => {
    const statuses = []
    for (let n = 0; n < 3; n++) statuses.push(await send('/hidden', { 'x-api-key': 'sk-live-123' }))
    expect(statuses).toEqual([200, 429, 429])
    const view = await live()
    const hidden = view.topLimited.find(({ rule }) => rule === 'live-hidden')
    expect(hidden?.key).toMatch(/^hmac:[0-9a-f]{16}$/)
    expect(hidden?.count).toBe(2)
    expect(JSON.stringify(view)).not.toContain('sk-live-123')
    // Not the plain SHA-256 of the key, which anyone could compute from a guess.
    const plain = await crypto.subtle.digest(
      'SHA-256',
      new TextEncoder().encode('live-hidden|sk-live-123')
    )
    const plainHex = [...new Uint8Array(plain, 0, 8)]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('')
    expect(hidden?.key).not.toBe(`hmac:${plainHex}`)
    // The operator looks the raw key up and finds the same hash: the server hashes it.
    const lookup = await asOperator('/__ratelimit/keys/live-hidden/sk-live-123')
    expect(((await lookup.json()) as { hash: string }).hash).toBe(hidden?.key)
  })
})
