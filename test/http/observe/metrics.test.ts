import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { keyHasher } from '../../../src/http/observe/key-hash'
import type { LimiterNamespace } from '../../../src/limiter/client'
import { client, rules } from '../../support/http'

/** An Analytics Engine dataset that keeps what is written (local runs drop real writes). */
function recordingDataset() {
  const points: AnalyticsEngineDataPoint[] = []
  return { points, writeDataPoint: (point: AnalyticsEngineDataPoint) => void points.push(point) }
}

/** `index1` as the Worker writes it: an HMAC-SHA-256 prefix keyed by the deployment's secret. */
const keyedPrefix = (key: string) =>
  keyHasher(undefined, env.LIMITER as unknown as LimiterNamespace).hash(key)

const flaky = (c: { env: { FLAKY_LIMITER: unknown } }) => c.env.FLAKY_LIMITER as LimiterNamespace

describe('Analytics Engine metrics', () => {
  const ruleSet = rules(
    {
      id: 'm-api',
      match: { path: '/api/*' },
      key: ['header:x-api-key'],
      algorithm: 'fixed-window',
      limit: 3,
      period: '1h',
      nearLimit: 0.5,
    },
    {
      id: 'm-shadow',
      match: { path: '/api/*' },
      key: ['header:x-api-key'],
      algorithm: 'fixed-window',
      limit: 1,
      period: '1h',
      shadow: true,
    }
  )

  it('writes one point per rule decision with the documented layout, and near-limit once per window', async () => {
    const dataset = recordingDataset()
    const send = client({ rules: ruleSet }, { RATE_LIMIT_METRICS: dataset })
    const apiKey = 'secret-api-key-1'
    const statuses: number[] = []
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await send('/api/items', {
            headers: { 'x-api-key': apiKey },
            cf: { country: 'DE' },
          } as RequestInit)
        ).status
      )
    expect(statuses).toEqual([200, 200, 200, 429])
    const hash = await keyedPrefix(`m-api|${apiKey}`)
    const api = dataset.points.filter((p) => p.blobs![0] === 'm-api')
    expect(api.map((p) => p.blobs![1])).toEqual([
      'allowed',
      'allowed',
      'near-limit',
      'allowed',
      'limited',
    ])
    expect(api[0]).toEqual({
      blobs: ['m-api', 'allowed', 'durable-object', '/api/*', 'DE'],
      doubles: [1, 1, 2, 3, 0],
      indexes: [hash],
    })
    expect(api[4]!.doubles![4]).toBeGreaterThan(0)
    for (const point of dataset.points) expect(JSON.stringify(point)).not.toContain(apiKey)
    const shadow = dataset.points.filter((p) => p.blobs![0] === 'm-shadow')
    expect(shadow.map((p) => p.blobs![1])).toEqual([
      'allowed',
      'shadow-limited',
      'shadow-limited',
      'shadow-limited',
    ])
  })

  it('writes fail-open and fail-closed points', async () => {
    const dataset = recordingDataset()
    const send = client(
      {
        limiter: flaky,
        rules: rules(
          { id: 'throws-open', key: [], algorithm: 'fixed-window', limit: 9, period: '1m' },
          {
            id: 'throws-closed',
            match: { path: '/closed' },
            key: [],
            algorithm: 'fixed-window',
            limit: 9,
            period: '1m',
            failMode: 'closed',
          }
        ),
      },
      { RATE_LIMIT_METRICS: dataset }
    )
    expect((await send('/open')).status).toBe(200)
    expect((await send('/closed')).status).toBe(503)
    expect(dataset.points.map((p) => p.blobs!.slice(0, 2))).toEqual([
      ['throws-open', 'fail-open'],
      ['throws-open', 'fail-open'],
      ['throws-closed', 'fail-closed'],
    ])
  })

  it('writes nothing, and breaks nothing, without the binding or with METRICS=off', async () => {
    const dataset = recordingDataset()
    const off = client({ rules: ruleSet }, { RATE_LIMIT_METRICS: dataset, METRICS: 'off' })
    expect((await off('/api/x', { headers: { 'x-api-key': 'k-off' } })).status).toBe(200)
    expect(dataset.points).toEqual([])
    const unbound = client({ rules: ruleSet })
    expect((await unbound('/api/x', { headers: { 'x-api-key': 'k-unbound' } })).status).toBe(200)
  })
})
