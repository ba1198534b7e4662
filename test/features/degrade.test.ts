import { afterEach, describe, expect, it, vi } from 'vitest'
import { clientStats } from '../../src/limiter/calls/stats'
import { freezeClock } from '../support/clock'
import { client, parseRateLimit, rules } from '../support/http'

type Echo = { path: string; query: Record<string, string>; headers: Record<string, string> }

/** An Analytics Engine dataset that keeps what is written (local runs drop real writes). */
function recordingDataset() {
  const points: AnalyticsEngineDataPoint[] = []
  return { points, writeDataPoint: (point: AnalyticsEngineDataPoint) => void points.push(point) }
}

const search = (fields: Record<string, unknown>) => ({
  id: 'search',
  match: { path: '/search' },
  key: ['ip'],
  algorithm: 'fixed-window',
  limit: 2,
  period: '1h',
  action: 'degrade',
  ...fields,
})

describe('action "degrade": a lighter answer instead of a 429', () => {
  it('sends requests over the limit to degradeTo, with the original path, and counts them as degraded', async () => {
    const dataset = recordingDataset()
    const send = client(
      { rules: rules(search({ degradeTo: '/search-lite' })) },
      { RATE_LIMIT_METRICS: dataset }
    )
    const init = { ip: '198.51.100.21' }
    const first = (await (await send('/search?q=a', init)).json()) as Echo
    expect(first.path).toBe('/search')
    expect(first.headers['x-ratelimit-degraded']).toBeUndefined()
    await send('/search?q=b', init)
    const response = await send('/search?q=c', init)
    expect(response.status).toBe(200)
    expect(response.headers.get('X-RateLimit-Degraded')).toBe('search')
    expect(parseRateLimit(response.headers.get('RateLimit')).search?.r).toBe(0)
    const echoed = (await response.json()) as Echo
    expect(echoed.path).toBe('/search-lite')
    expect(echoed.query).toEqual({ q: 'c' })
    expect(echoed.headers['x-ratelimit-degraded']).toBe('search')
    expect(echoed.headers['x-ratelimit-original-path']).toBe('/search')
    expect(dataset.points.map((p) => p.blobs![1])).toEqual(['allowed', 'allowed', 'degraded'])
  })

  it('marks the request with X-RateLimit-Degraded for degradeHeader, on the same path', async () => {
    const send = client({ rules: rules(search({ id: 'search-h', degradeHeader: true })) })
    const init = { ip: '198.51.100.22' }
    await send('/search', init)
    await send('/search', init)
    const echoed = (await (await send('/search', init)).json()) as Echo
    expect(echoed.path).toBe('/search')
    expect(echoed.headers['x-ratelimit-degraded']).toBe('search-h')
    expect(echoed.headers['x-ratelimit-original-path']).toBeUndefined()
  })

  // One case per class of spelling that common servers read as the limiter's own headers.
  it.each([
    ['as written', 'X-RateLimit-Degraded', 'X-RateLimit-Original-Path'],
    ['in another case', 'X-RATELIMIT-DEGRADED', 'x-ratelimit-original-path'],
    ['with _ for - (CGI, WSGI)', 'X_RateLimit_Degraded', 'X_RateLimit_Original_Path'],
    ['with - and _ mixed', 'X-RateLimit_Degraded', 'X_RateLimit-Original-Path'],
    [
      'with other punctuation (Apache 2.2, lighttpd)',
      'X.RateLimit.Degraded',
      'X~RateLimit~Original~Path',
    ],
  ])(
    'never forwards degradation headers a client wrote itself, %s',
    async (label, degraded, original) => {
      // A rule of its own per case: a third request of one key would be degraded for real.
      const send = client({
        rules: rules(search({ id: `search-c-${label.length}`, degradeHeader: true })),
      })
      const echoed = (await (
        await send('/search', {
          ip: '198.51.100.23',
          headers: { [degraded]: 'forged', [original]: '/admin', 'X-RateLimit-Kept': 'yes' },
        })
      ).json()) as Echo
      expect(Object.keys(echoed.headers).filter((name) => /degraded|original/i.test(name))).toEqual(
        []
      )
      expect(echoed.headers['x-ratelimit-kept']).toBe('yes')
    }
  )

  it('refuses with 429 when a rule that rejects is over its limit too', async () => {
    const send = client({
      rules: rules(search({ id: 'search-d', degradeHeader: true }), {
        id: 'search-strict',
        match: { path: '/search' },
        key: ['ip'],
        algorithm: 'fixed-window',
        limit: 2,
        period: '1h',
      }),
    })
    const init = { ip: '198.51.100.24' }
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await send('/search', init)).status)
    expect(statuses).toEqual([200, 200, 429])
  })
})

describe('a degraded request is still counted by every other rule', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('charges the other rules while the isolate repeats the degrading rule’s refusal, and a rule that rejects then answers 429', async () => {
    freezeClock()
    const send = client({
      rules: rules(
        {
          id: 'search-cached',
          match: { path: '/search' },
          key: ['ip'],
          algorithm: 'fixed-window',
          limit: 3,
          period: '1m',
          action: 'degrade',
          degradeTo: '/search-lite',
        },
        {
          id: 'all-per-ip',
          match: { path: ['/search', '/search-lite'] },
          key: ['ip'],
          algorithm: 'fixed-window',
          limit: 6,
          period: '1m',
        }
      ),
    })
    const init = { ip: '198.51.100.31' }
    const seen: string[] = []
    for (let i = 0; i < 20; i++) {
      const response = await send('/search', init)
      seen.push(
        response.status === 200
          ? (response.headers.get('X-RateLimit-Degraded') ?? '200')
          : String(response.status)
      )
    }
    // 3 within search's limit, 3 more degraded (all-per-ip counts them), then all-per-ip refuses.
    expect(seen).toEqual([
      ...Array<string>(3).fill('200'),
      ...Array<string>(3).fill('search-cached'),
      ...Array<string>(14).fill('429'),
    ])
    // The isolate answered search's refusal itself from the 5th request on: the test is about that path.
    const stats = clientStats().snapshot().rules['search-cached']!
    expect(stats.decisions.local).toBeGreaterThan(0)
  })
})
