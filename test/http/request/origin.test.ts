import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../../src/app'
import { client, rules } from '../../support/http'

const limited = rules({
  id: 'pass',
  key: ['ip'],
  algorithm: 'sliding-window',
  limit: 1000,
  period: '1h',
})

type Echo = {
  method: string
  url: string
  headers: Record<string, string>
  body: string
  bodyLength: number
}

describe('forwarding to ORIGIN over the network', () => {
  const send = client({ rules: limited }, { ORIGIN: env.TEST_ORIGIN })

  it('passes method, path, query, headers and a streamed body through, and the response back', async () => {
    const chunks = ['{"part":1}', '{"part":2}', 'x'.repeat(100_000)]
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift()
        if (next === undefined) controller.close()
        else controller.enqueue(new TextEncoder().encode(next))
      },
    })
    const response = await send('/api/items/7?b=2&a=1&a=3', {
      method: 'PUT',
      ip: '203.0.113.1',
      headers: { 'content-type': 'application/json', 'x-custom': 'yes', authorization: 'Bearer t' },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(response.status).toBe(200)
    const echo = (await response.json()) as Echo
    expect(echo.method).toBe('PUT')
    expect(echo.url).toBe('/api/items/7?b=2&a=1&a=3')
    expect(echo.headers).toMatchObject({
      'content-type': 'application/json',
      'x-custom': 'yes',
      authorization: 'Bearer t',
    })
    expect(echo.bodyLength).toBe(10 + 10 + 100_000)
    expect(echo.body.startsWith('{"part":1}{"part":2}xxx')).toBe(true)
    expect(response.headers.get('x-origin-header')).toBe('kept')
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/'])
    expect(response.headers.get('X-RateLimit-Limit')).toBe('1000')
  })

  it.each([201, 204, 302, 404, 500, 503])('passes status %i through unchanged', async (status) => {
    const response = await send(`/s?status=${status}`, { ip: '203.0.113.2' })
    expect(response.status).toBe(status)
    expect(response.headers.get('X-RateLimit-Remaining')).not.toBeNull()
  })

  it('hands redirects back instead of following them', async () => {
    const response = await send('/r?status=302', { ip: '203.0.113.3', redirect: 'manual' })
    expect(response.status).toBe(302)
  })

  it("answers HEAD with the origin's headers and no body", async () => {
    const response = await send('/h', { method: 'HEAD', ip: '203.0.113.4' })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-origin-header')).toBe('kept')
    expect(await response.text()).toBe('')
  })

  it('joins a base path in ORIGIN with the request path', async () => {
    const prefixed = client({ rules: limited }, { ORIGIN: `${env.TEST_ORIGIN}/base/` })
    const echo = (await (await prefixed('/api/x?q=1', { ip: '203.0.113.5' })).json()) as Echo
    expect(echo.url).toBe('/base/api/x?q=1')
  })
})

describe('origin problems are 502 problems, never 500s', () => {
  it.each([
    ['an unreachable origin', 'http://127.0.0.1:1', 'The origin could not be reached.'],
    ['an ORIGIN that is not a URL', 'not a url', 'ORIGIN "not a url" is not an http(s) URL.'],
    ['a non-http ORIGIN', 'ftp://example.com', 'ORIGIN "ftp://example.com" is not an http(s) URL.'],
  ])('%s', async (_label, origin, detail) => {
    const send = client({ rules: limited }, { ORIGIN: origin })
    const response = await send('/x', { ip: '203.0.113.6' })
    expect(response.status).toBe(502)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({ status: 502, title: 'Bad Gateway', detail })
  })

  it('refuses to loop back into itself when ORIGIN is empty on a local host', async () => {
    const app = createApp({ rules: limited })
    const response = await app.request('http://localhost:8787/x', {}, { ...env, ORIGIN: '' })
    expect(response.status).toBe(502)
    expect(((await response.json()) as { detail: string }).detail).toMatch(/ORIGIN is not set/)
  })
})
