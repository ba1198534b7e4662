import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { parseRules } from '../../src/rules'

/** An app with one concurrency rule; requests are sent without waiting for their bodies. */
function setup(rule: Record<string, unknown>) {
  const app = createApp({
    rules: parseRules(
      { version: 1, rules: [{ id: 'slots', key: ['ip'], algorithm: 'concurrency', ...rule }] },
      't'
    ),
  })
  return async (ip: string) => {
    const ctx = createExecutionContext()
    const response = await app.fetch(
      new Request('https://example.com/x', { headers: { 'cf-connecting-ip': ip } }),
      { ...env, ORIGIN: 'demo' },
      ctx
    )
    /** Reads the body, then waits for the slot to be released. */
    const finish = async () => {
      await response.text()
      await waitOnExecutionContext(ctx)
    }
    return { response, finish }
  }
}

describe('concurrency limit through the HTTP path', () => {
  it('holds a slot until the response body is done; a full queue is a 429', async () => {
    const send = setup({ limit: 1, queue: 0, maxWait: '1s' })
    const first = await send('203.0.113.150')
    expect(first.response.status).toBe(200)
    expect(first.response.headers.get('RateLimit-Policy')).toBe(
      '"slots";q=1;qu="concurrent-requests"'
    )
    expect(first.response.headers.get('X-RateLimit-Remaining')).toBe('0')
    const second = await send('203.0.113.150')
    expect(second.response.status).toBe(429)
    await second.finish()
    await first.finish()
    const third = await send('203.0.113.150')
    expect(third.response.status).toBe(200)
    await third.finish()
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
