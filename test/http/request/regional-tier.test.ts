import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { UNENFORCED_HEADER } from '../../../src/http/request/rate-limit'
import { REGION_PREFIX } from '../../../src/limiter/leased/lease-calls'
import { REGIONAL_RATE_PER_S } from '../../../src/limiter/leased/location-lessor'
import { flakyLeased, quietConsole } from '../../support/flaky-leased'

// A key of a high rate passes through three tiers: the isolate's location object, the key's
// object in the isolate's region (from `request.cf`), then the key's root object. The regional
// object can fail (the rule id picks how, see `FlakyLimiterObject`); the request then gets its
// rule's fail mode, as when a location object fails. Every request here comes from Frankfurt,
// so this file's isolate knows its location and region from the first.
const FRANKFURT = { colo: 'FRA', continent: 'EU', country: 'DE', longitude: '8.68' }

/** A leased rule on one global key, at `perSecond`, whose regional object fails as `fault` says. */
function leasedThroughRegion(fault: string, failMode: 'open' | 'closed', perSecond: number) {
  const limit = { limit: perSecond * 60, period: '60s' }
  const { id, send } = flakyLeased(fault, failMode, limit, { ip: '203.0.113.71', cf: FRANKFURT })
  const region = env.FLAKY_LIMITER.getByName(`${id}@${REGION_PREFIX}weur`)
  return { send, region }
}

quietConsole()

describe('leased quotas when the regional tier fails', () => {
  it.each([
    ['throws', 'reg-throws'],
    ['never answers', 'reg-hangs'],
  ])(
    'the regional object %s: fail open lets the request through, marked unenforced; fail closed answers 503',
    async (_case, fault) => {
      const open = await leasedThroughRegion(fault, 'open', REGIONAL_RATE_PER_S).send()
      expect(open.status).toBe(200)
      expect(open.headers.get(UNENFORCED_HEADER)).toMatch(new RegExp(`^${fault}-open-`))
      const closed = await leasedThroughRegion(fault, 'closed', REGIONAL_RATE_PER_S).send()
      expect(closed.status).toBe(503)
    }
  )

  it('the regional object overloaded, even after waits: denied for now whatever the fail mode', async () => {
    for (const failMode of ['open', 'closed'] as const) {
      const response = await leasedThroughRegion(
        'reg-overloaded',
        failMode,
        REGIONAL_RATE_PER_S
      ).send()
      expect(response.status).toBe(429)
      expect(Number(response.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1)
      expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
    }
  })

  it('the regional object reset (a deploy): the call is asked again once and the request decided', async () => {
    const { send, region } = leasedThroughRegion('reg-restarts', 'closed', REGIONAL_RATE_PER_S)
    const response = await send()
    expect(response.status).toBe(200)
    expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
    expect(await region.leaseCalls('sublease-calls')).toBeGreaterThanOrEqual(2)
  })

  it('a key below the regional rate leases from the root: a failing regional object is never asked', async () => {
    const { send, region } = leasedThroughRegion('reg-throws', 'closed', REGIONAL_RATE_PER_S - 1)
    const response = await send()
    expect(response.status).toBe(200)
    expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
    expect(await region.leaseCalls('sublease-calls')).toBe(0)
  })
})
