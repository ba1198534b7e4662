import { describe, expect, it } from 'vitest'
import type { ClientStatsSnapshot } from '../../../src/limiter/calls/stats'
import { client, rules } from '../../support/http'

const TOKEN = 'stats-test-token'
const auth = { authorization: `Bearer ${TOKEN}` }

describe('GET /__ratelimit/stats', () => {
  const send = client(
    {
      rules: rules(
        { id: 'stats-ip', key: ['ip'], algorithm: 'fixed-window', limit: 3, period: '1h' },
        {
          id: 'stats-other',
          match: { path: '/never' },
          key: [],
          algorithm: 'fixed-window',
          limit: 1,
          period: '1m',
        }
      ),
    },
    { ADMIN_TOKEN: TOKEN, ORIGIN: 'demo' }
  )
  const stats = async () => {
    const response = await send('/__ratelimit/stats', { headers: auth })
    expect(response.status).toBe(200)
    return (await response.json()) as ClientStatsSnapshot
  }

  it('counts every Durable Object call and decision of this isolate, so a script can take differences', async () => {
    const before = await stats()
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await send('/x', { ip: '198.51.100.77' })).status)
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    const after = await stats()
    // The admin API's own look at the caller's wrong-token counter is a call too.
    const adminCalls = (s: ClientStatsSnapshot) =>
      s.rules['__auth-failures']?.durableObjectCalls ?? 0
    expect(adminCalls(after) - adminCalls(before)).toBe(1)
    // The second 429 is this isolate repeating the first: a local decision, no call.
    expect(after.durableObjectCalls - before.durableObjectCalls).toBe(5)
    expect(after.decisions.durableObject - before.decisions.durableObject).toBe(4)
    expect(after.decisions.local - before.decisions.local).toBe(1)
    expect(after.inFlight).toBe(0)
    const rule = after.rules['stats-ip']!
    expect(rule.durableObjectCalls - (before.rules['stats-ip']?.durableObjectCalls ?? 0)).toBe(4)
    expect(rule.decisions.local - (before.rules['stats-ip']?.decisions.local ?? 0)).toBe(1)
    expect(rule.latencyMs.p50).not.toBeNull()
    expect(after.rules['stats-other']).toBeUndefined()
  })

  it('needs the admin token', async () => {
    expect((await send('/__ratelimit/stats')).status).toBe(401)
    expect((await send('/__ratelimit/stats', { method: 'POST', headers: auth })).status).toBe(405)
  })
})
