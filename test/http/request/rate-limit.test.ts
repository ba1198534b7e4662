import { env, exports } from 'cloudflare:workers'
import { Hono } from 'hono'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  rateLimit,
  UNENFORCED_HEADER,
  type RateLimitBindings,
} from '../../../src/http/request/rate-limit'
import type { LimiterNamespace } from '../../../src/limiter/client'
import { freezeClock } from '../../support/clock'
import { client, parseRateLimit, rules } from '../../support/http'

const worker = (path: string, init: RequestInit = {}) =>
  exports.default.fetch(new Request(`http://example.com${path}`, init))

describe('the Worker with its bundled rules', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('answers 200s with headers, then a 429 problem, and does not call the origin', async () => {
    const nowMs = freezeClock()
    // A sliding window's quota is whole again two windows after the current one started.
    const resetS = (Math.floor(nowMs / 60_000) * 60_000 + 120_000) / 1000
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 12; i++) {
      last = await worker('/api/hello', { headers: { 'cf-connecting-ip': '198.51.100.1' } })
      statuses.push(last.status)
      if (i === 0) {
        expect(last.headers.get('X-RateLimit-Limit')).toBe('10')
        expect(last.headers.get('X-RateLimit-Remaining')).toBe('9')
        expect(last.headers.get('X-RateLimit-Reset')).toBe(String(resetS))
        expect(last.headers.get('RateLimit-Policy')).toBe('"api-per-ip";q=10;w=60')
        // pk, the partition key: the address the rule keys on, as bytes (base64).
        const pk = `pk=:${btoa('198.51.100.1')}:`
        expect(last.headers.get('RateLimit')).toMatch(new RegExp(`^"api-per-ip";r=9;t=\\d+;${pk}$`))
        expect(last.headers.get('x-demo-origin')).toBe('1')
      }
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429])
    const denied = last!
    expect(denied.headers.get('content-type')).toBe('application/problem+json')
    expect(denied.headers.get('x-demo-origin')).toBeNull()
    const retryAfter = Number(denied.headers.get('Retry-After'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(denied.headers.get('X-RateLimit-Retry-After')).toBe(String(retryAfter))
    // draft-11: t is when more quota comes, which at r=0 is the Retry-After.
    expect(parseRateLimit(denied.headers.get('RateLimit'))['api-per-ip']).toEqual({
      r: 0,
      t: retryAfter,
    })
    expect(denied.headers.get('X-RateLimit-Remaining')).toBe('0')
    expect(await denied.json()).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Too Many Requests',
      status: 429,
      detail: `Rate limit "api-per-ip" (10 requests per 1m) exceeded. Retry in ${retryAfter} s.`,
      rule: 'api-per-ip',
      retry_after: retryAfter,
      'violated-policies': ['api-per-ip'],
    })
  })

  it('leaves requests no rule matches alone: no headers, straight to the origin', async () => {
    const response = await worker('/health', { headers: { 'cf-connecting-ip': '198.51.100.2' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('X-RateLimit-Limit')).toBeNull()
    expect(response.headers.get('RateLimit')).toBeNull()
  })

  it('checks every matching rule and lists each in RateLimit-Policy', async () => {
    const response = await worker('/api/x', {
      headers: { 'cf-connecting-ip': '198.51.100.3', 'x-api-key': 'k1' },
    })
    expect(response.headers.get('RateLimit-Policy')).toBe(
      '"api-per-ip";q=10;w=60, "api-key-burst";q=20;w=2'
    )
    // The key on x-api-key is not shown (it may be a credential): no pk for it.
    expect(response.headers.get('RateLimit')).toMatch(
      new RegExp(`^"api-per-ip";r=9;t=\\d+;pk=:${btoa('198.51.100.3')}:, "api-key-burst";r=19;t=1$`)
    )
    expect(Object.keys(parseRateLimit(response.headers.get('RateLimit')))).toEqual([
      'api-per-ip',
      'api-key-burst',
    ])
  })

  it('counts every request without a usable CF-Connecting-IP under one shared key', async () => {
    // Absent, or junk a client wrote because a proxy in front passes the header through.
    const spellings = [null, '', 'not-an-ip', '1.2.3', '999.1.1.1', '203.0.113.7, 10.0.0.1']
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const spelling = spellings[i % spellings.length]!
      const headers: Record<string, string> = { 'x-forwarded-for': `198.51.100.${i}` }
      if (spelling !== null) headers['cf-connecting-ip'] = spelling
      const response = await worker('/api/x', { headers })
      statuses.push(response.status)
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429])
    // A real address is its own client.
    const real = await worker('/api/x', { headers: { 'cf-connecting-ip': '198.51.100.4' } })
    expect(real.status).toBe(200)
  })

  it('groups IPv6 clients by /64 and counts IPv4-mapped addresses as IPv4', async () => {
    for (let i = 1; i <= 10; i++) {
      const response = await worker('/api/v6', {
        headers: { 'cf-connecting-ip': `2001:db8:aa:bb::${i.toString(16)}` },
      })
      expect(response.status).toBe(200)
    }
    expect(
      (await worker('/api/v6', { headers: { 'cf-connecting-ip': '2001:db8:aa:bb:ffff::1' } }))
        .status
    ).toBe(429)
    expect(
      (await worker('/api/v6', { headers: { 'cf-connecting-ip': '2001:db8:aa:bc::1' } })).status
    ).toBe(200)

    for (let i = 0; i < 10; i++)
      await worker('/api/v4', { headers: { 'cf-connecting-ip': '192.0.2.99' } })
    expect(
      (await worker('/api/v4', { headers: { 'cf-connecting-ip': '::ffff:192.0.2.99' } })).status
    ).toBe(429)
  })
})

describe('rateLimit middleware', () => {
  it.each([
    ['sliding-window', {}],
    ['token-bucket', { burst: 100 }],
  ])('admits exactly 100 of 500 concurrent requests on one key (%s)', async (algorithm, extra) => {
    const send = client({
      rules: rules({
        id: `c-${algorithm}`,
        key: ['ip'],
        algorithm,
        limit: 100,
        period: '1h',
        ...extra,
      }),
    })
    const responses = await Promise.all(
      Array.from({ length: 500 }, () => send('/x', { ip: '203.0.113.50' }))
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(100)
    expect(statuses.filter((s) => s === 429)).toHaveLength(400)
  })

  it('a denied request still counts against the rules that allowed it', async () => {
    const send = client({
      rules: rules(
        { id: 'wide', key: ['ip'], algorithm: 'sliding-window', limit: 1000, period: '1h' },
        { id: 'narrow', key: ['ip'], algorithm: 'sliding-window', limit: 1, period: '1h' }
      ),
    })
    const first = await send('/x', { ip: '203.0.113.60' })
    expect(parseRateLimit(first.headers.get('RateLimit'))).toMatchObject({
      wide: { r: 999 },
      narrow: { r: 0 },
    })
    const second = await send('/x', { ip: '203.0.113.60' })
    expect(second.status).toBe(429)
    expect(parseRateLimit(second.headers.get('RateLimit'))).toMatchObject({
      wide: { r: 998 },
      narrow: { r: 0 },
    })
    expect(await second.json()).toMatchObject({ rule: 'narrow', 'violated-policies': ['narrow'] })
  })

  it.each([
    ['legacy', ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']],
    ['ietf', ['ratelimit', 'ratelimit-policy']],
    ['none', []],
    [
      'both',
      [
        'ratelimit',
        'ratelimit-policy',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
      ],
    ],
  ])('RATE_LIMIT_HEADERS=%s sends only those headers', async (mode, expected) => {
    const send = client(
      {
        rules: rules({
          id: `h-${mode}`,
          key: ['ip'],
          algorithm: 'sliding-window',
          limit: 5,
          period: '1m',
        }),
      },
      { RATE_LIMIT_HEADERS: mode }
    )
    const response = await send('/x', { ip: '203.0.113.70' })
    const names = [...response.headers.keys()].filter((n) => n.includes('ratelimit')).sort()
    expect(names).toEqual(expected)
  })

  it('lets a custom onLimited build the 429', async () => {
    const send = client({
      rules: rules({
        id: 'custom',
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 1,
        period: '1m',
      }),
      onLimited: (_c, denied) =>
        new Response(`slow down: ${denied[0]!.check.rule.id}`, { status: 429 }),
    })
    await send('/x', { ip: '203.0.113.80' })
    const response = await send('/x', { ip: '203.0.113.80' })
    expect(response.status).toBe(429)
    expect(await response.text()).toBe('slow down: custom')
    expect(response.headers.get('Retry-After')).not.toBeNull()
  })
})

describe('when the Durable Object fails', () => {
  const flaky = (c: { env: { FLAKY_LIMITER: unknown } }) => c.env.FLAKY_LIMITER as LimiterNamespace

  it('fails open by default: the request goes through, marked unenforced', async () => {
    const send = client({
      limiter: flaky,
      rules: rules({
        id: 'throws-open',
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 1,
        period: '1m',
      }),
    })
    for (let i = 0; i < 3; i++) {
      const response = await send('/x', { ip: '203.0.113.90' })
      expect(response.status).toBe(200)
      expect(response.headers.get(UNENFORCED_HEADER)).toBe('throws-open')
      expect(response.headers.get('X-RateLimit-Limit')).toBeNull()
    }
  })

  it('fails open on a timeout', async () => {
    const send = client({
      limiter: flaky,
      timeoutMs: 50,
      rules: rules({
        id: 'hangs-open',
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 1,
        period: '1m',
      }),
    })
    const response = await send('/x', { ip: '203.0.113.91' })
    expect(response.status).toBe(200)
    expect(response.headers.get(UNENFORCED_HEADER)).toBe('hangs-open')
  })

  it('fails closed with a 503 problem when the rule says so', async () => {
    const send = client(
      {
        limiter: flaky,
        rules: rules({
          id: 'hangs-closed',
          key: ['ip'],
          algorithm: 'sliding-window',
          limit: 1,
          period: '1m',
          failMode: 'closed',
        }),
      },
      { LIMITER_TIMEOUT_MS: '50' }
    )
    const response = await send('/x', { ip: '203.0.113.92' })
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toMatchObject({
      status: 503,
      title: 'Service Unavailable',
      rules: ['hangs-closed'],
      detail: 'The rate limiter could not decide (timeout) and "hangs-closed" fails closed.',
    })
  })
})

describe('requests and responses the limiter must not take at face value', () => {
  it('answers 400 when a keyed query parameter is repeated, without charging anything', async () => {
    const send = client({
      rules: rules({
        id: 'by-key',
        key: ['query:api_key'],
        algorithm: 'sliding-window',
        limit: 1,
        period: '1h',
      }),
    })
    const response = await send('/x?api_key=junk&api_key=REAL', { ip: '203.0.113.100' })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await response.json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail:
        'The query parameter "api_key" appears 2 times; a rate-limit key needs exactly one value. Rule "by-key" reads query:api_key.',
      rule: 'by-key',
    })
    expect((await send('/x?api_key=REAL', { ip: '203.0.113.100' })).status).toBe(200)
  })

  it("keeps its own legacy headers and adds its draft-11 items to an origin's", async () => {
    const app = new Hono<{ Bindings: RateLimitBindings }>()
    app.use(
      rateLimit({
        rules: rules({
          id: 'edge',
          key: ['ip'],
          algorithm: 'sliding-window',
          limit: 5,
          period: '1m',
        }),
      })
    )
    app.get(
      '/',
      () =>
        new Response('ok', {
          headers: {
            'X-RateLimit-Limit': '999',
            RateLimit: '"origin";r=1;t=1',
            'RateLimit-Policy': '"origin";q=2;w=1',
            'x-other': 'kept',
          },
        })
    )
    const response = await app.request(
      '/',
      { headers: { 'cf-connecting-ip': '203.0.113.101' } },
      env
    )
    expect(response.headers.get('X-RateLimit-Limit')).toBe('5')
    expect(response.headers.get('RateLimit-Policy')).toBe('"origin";q=2;w=1, "edge";q=5;w=60')
    expect(Object.keys(parseRateLimit(response.headers.get('RateLimit')))).toEqual([
      'origin',
      'edge',
    ])
    expect(response.headers.get('x-other')).toBe('kept')
  })
})
