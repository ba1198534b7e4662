import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { parseRules } from '../../src/rules'

/** An app with one concurrency rule; requests are sent without waiting for their bodies. */
function setup(rule: Record<string, unknown>, origin = 'demo') {
  const app = createApp({
    rules: parseRules(
      { version: 1, rules: [{ id: 'slots', key: ['ip'], algorithm: 'concurrency', ...rule }] },
      't'
    ),
  })
  return async (ip: string, headers: Record<string, string> = {}) => {
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request('https://example.com/x', { headers: { 'cf-connecting-ip': ip, ...headers } }),
      { ...env, ORIGIN: origin },
      ctx
    )
    /** Reads the body, then waits for the slot to be released. */
    const finish = async () => {
      await response.text()
      await waitOnExecutionContext(ctx)
    }
    return { response, finish, ctx }
  }
}

describe('concurrency limit through the HTTP path', () => {
  it('holds a slot until the response body is done; a full queue is a 429', async () => {
    const send = setup({ limit: 1, queue: 0, maxWait: '1s' })
    const first = await send('203.0.113.150')
    expect(first.response.status).toBe(200)
    // The partition key is the address the rule keys on (base64 of "203.0.113.150").
    const pk = 'pk=:MjAzLjAuMTEzLjE1MA==:'
    expect(first.response.headers.get('RateLimit-Policy')).toBe(
      '"slots";q=1;qu="concurrent-requests"'
    )
    // No t: a slot comes back when a request ends, at no time known in advance.
    expect(first.response.headers.get('RateLimit')).toBe(`"slots";r=0;${pk}`)
    expect(first.response.headers.get('X-RateLimit-Remaining')).toBe('0')
    const second = await send('203.0.113.150')
    expect(second.response.status).toBe(429)
    // An estimate (no release seen yet: the 1 s floor), not the 60 s lease; t says the same.
    expect(second.response.headers.get('Retry-After')).toBe('1')
    expect(second.response.headers.get('RateLimit')).toBe(`"slots";r=0;t=1;${pk}`)
    await second.finish()
    await first.finish()
    const third = await send('203.0.113.150')
    expect(third.response.status).toBe(200)
    await third.finish()
  })

  it('defaults the lease to 60 s: a held slot never asks for a longer wait', async () => {
    const send = setup({ limit: 1 })
    const first = await send('203.0.113.153')
    const second = await send('203.0.113.153')
    expect(second.response.status).toBe(429)
    const retryAfter = Number(second.response.headers.get('Retry-After'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    await second.finish()
    await first.finish()
  })

  it('queues a request until a slot frees', async () => {
    const send = setup({ limit: 1, queue: 1, maxWait: '5s' })
    const first = await send('203.0.113.151')
    const queued = send('203.0.113.151')
    await first.finish()
    const second = await queued
    expect(second.response.status).toBe(200)
    await second.finish()
  })

  it('answers 504 when a queued request waits past maxWait', async () => {
    const send = setup({ limit: 1, queue: 1, maxWait: '50ms' })
    const first = await send('203.0.113.152')
    const second = await send('203.0.113.152')
    expect(second.response.status).toBe(504)
    expect(await second.response.json()).toMatchObject({
      status: 504,
      title: 'Gateway Timeout',
      rules: ['slots'],
    })
    await first.finish()
  })

  it.each([
    ['the demo origin', 'demo', '203.0.113.153'],
    ['an origin over the network', env.TEST_ORIGIN, '203.0.113.154'],
  ])(
    'holds the slot of a WebSocket upgrade until the socket closes (%s)',
    async (_, origin, ip) => {
      const send = setup({ limit: 1, queue: 0, maxWait: '1s' }, origin)
      const upgrade = await send(ip, { upgrade: 'websocket' })
      expect(upgrade.response.status).toBe(101)
      if (origin !== 'demo') expect(upgrade.response.headers.get('x-origin-header')).toBe('kept')
      const socket = upgrade.response.webSocket!
      socket.accept()
      const echoed = new Promise((resolve) =>
        socket.addEventListener('message', (event) => resolve(event.data), { once: true })
      )
      socket.send('hello')
      expect(await echoed).toBe('hello')
      const whileOpen = await send(ip)
      expect(whileOpen.response.status).toBe(429)
      await whileOpen.finish()

      const closed = new Promise((resolve) => socket.addEventListener('close', resolve))
      socket.close(1000, 'done')
      await closed
      await waitOnExecutionContext(upgrade.ctx)
      const afterClose = await send(ip)
      expect(afterClose.response.status).toBe(200)
      await afterClose.finish()
    }
  )

  it('validates its fields', () => {
    expect(() =>
      parseRules(
        {
          version: 1,
          rules: [{ id: 'c', key: [], algorithm: 'concurrency', limit: 1, maxWait: '2m' }],
        },
        't'
      )
    ).toThrowError('rules[0].maxWait: a queued request may wait at most 60s')
    expect(() =>
      parseRules(
        {
          version: 1,
          rules: [{ id: 'c', key: [], algorithm: 'concurrency', limit: 1, period: '1s' }],
        },
        't'
      )
    ).toThrowError('rules[0]: unknown field "period"')
  })
})
