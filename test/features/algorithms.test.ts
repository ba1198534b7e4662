import { afterEach, describe, expect, it, vi } from 'vitest'
import { DELAY_HEADER } from '../../src/http/request/rate-limit'
import { parseRules } from '../../src/rules'
import { freezeClock } from '../support/clock'
import { client, parseRateLimit } from '../support/http'

const only = (rule: Record<string, unknown>) =>
  parseRules(
    { version: 1, rules: [{ id: 'r', key: ['ip'], limit: 3, period: '1h', ...rule }] },
    't'
  )

let host = 1
const ip = () => `198.19.0.${host++}`

describe('every algorithm through the HTTP path', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it.each([
    ['sliding-window', {}],
    ['token-bucket', {}],
    ['fixed-window', {}],
    ['sliding-log', {}],
    ['gcra', {}],
    ['leaky-bucket', {}],
  ])('%s: 3 allowed with headers, then 429', async (algorithm, extra) => {
    const send = client({ rules: only({ algorithm, ...extra }) })
    const who = ip()
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 4; i++) {
      last = await send('/x', { ip: who })
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    expect(last!.headers.get('RateLimit-Policy')).toMatch(/^"r";q=3;w=\d+$/)
    expect(Number(last!.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1)
  })

  // draft-ietf-httpapi-ratelimit-headers-11: `t` is the seconds until more quota comes, so at
  // r=0 it is when a request may pass again: the Retry-After, on the 429 and on the request
  // that took the last unit before it.
  it.each([
    ['sliding-window', { period: '1m' }],
    ['token-bucket', { period: '1m' }],
    ['fixed-window', { period: '1m' }],
    ['sliding-log', { period: '1m' }],
    ['gcra', { period: '1m' }],
    ['leaky-bucket', { period: '1m' }],
    ['leaky-bucket', { period: '1m', mode: 'shape', maxWait: '1s' }],
    ['sliding-window', { period: '1m', penalty: '5m' }],
  ])('%s %j: at r=0, t equals Retry-After', async (algorithm, extra) => {
    freezeClock()
    const send = client({ rules: only({ algorithm, ...extra }), wait: async () => {} })
    const who = ip()
    const responses: Response[] = []
    for (let i = 0; i < 4; i++) responses.push(await send('/x', { ip: who }))
    const [, , lastAllowed, denied] = responses as [Response, Response, Response, Response]
    expect(denied.status).toBe(429)
    const retryAfter = Number(denied.headers.get('Retry-After'))
    expect(retryAfter).toBeGreaterThan(1)
    expect(parseRateLimit(denied.headers.get('RateLimit')).r).toEqual({ r: 0, t: retryAfter })
    const penalty = 'penalty' in extra
    // Under a penalty the denial itself locks the key: the allowed request could not know.
    if (!penalty)
      expect(parseRateLimit(lastAllowed.headers.get('RateLimit')).r).toEqual({
        r: 0,
        t: retryAfter,
      })
  })

  it('the leaky-bucket shaper holds requests for their slot, says so, and refuses a full bucket', async () => {
    freezeClock()
    const waits: number[] = []
    const send = client({
      rules: only({
        algorithm: 'leaky-bucket',
        mode: 'shape',
        limit: 10,
        period: '1s',
        burst: 3,
        maxWait: '1s',
      }),
      wait: async (ms) => {
        waits.push(ms)
      },
    })
    const who = ip()
    const responses = []
    for (let i = 0; i < 4; i++) responses.push(await send('/x', { ip: who }))
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429])
    expect(responses.map((r) => r.headers.get(DELAY_HEADER))).toEqual([
      null,
      expect.stringMatching(/^\d+$/),
      expect.stringMatching(/^\d+$/),
      null,
    ])
    // Each admitted request waits one leak interval (100 ms) more than the one before it.
    expect(waits).toEqual([100, 200])
    expect(parseRateLimit(responses[3]!.headers.get('RateLimit')).r?.r).toBe(0)
  })
})
