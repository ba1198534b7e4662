import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { UNENFORCED_HEADER } from '../../../src/http/request/rate-limit'
import { flakyLeased, quietConsole } from '../../support/flaky-leased'

// Leased quotas pass through two tiers: the isolate's location object, then the key's root
// object. Each can fail (the rule id picks how, see `FlakyLimiterObject`); the request gets its
// rule's fail mode, and a tier that was only restarted costs nothing.

/**
 * A leased rule on one global key whose objects fail as `fault` says: 1,000 a second, leased
 * through the location's object (a key of under 100 leases straight from its root).
 */
function leasedThrough(fault: string, failMode: 'open' | 'closed') {
  const { id, send } = flakyLeased(
    fault,
    failMode,
    { limit: 3_600_000, period: '1h' },
    { ip: '203.0.113.70' }
  )
  const root = env.FLAKY_LIMITER.getByName(id)
  const location = env.FLAKY_LIMITER.getByName(`${id}@local`)
  return { send, root, location }
}

quietConsole()

describe('leased quotas when a tier fails', () => {
  it.each([
    ['the location object throws', 'loc-throws'],
    ['the location object never answers', 'loc-hangs'],
    ['the root object throws behind a working location object', 'throws'],
    ['the root object never answers', 'hangs'],
  ])(
    '%s: fail open lets the request through, marked unenforced; fail closed answers 503',
    async (_case, fault) => {
      const open = await leasedThrough(fault, 'open').send()
      expect(open.status).toBe(200)
      expect(open.headers.get(UNENFORCED_HEADER)).toMatch(new RegExp(`^${fault}-open-`))
      const closed = await leasedThrough(fault, 'closed').send()
      expect(closed.status).toBe(503)
    }
  )

  it.each([
    ['the location object', 'loc-overloaded'],
    ['the root object, behind a working location object', 'overloaded'],
  ])(
    '%s overloaded, even after waits: the request is denied for now whatever the fail mode (load is back-pressure, not a failure)',
    async (_case, fault) => {
      for (const failMode of ['open', 'closed'] as const) {
        const response = await leasedThrough(fault, failMode).send()
        expect(response.status).toBe(429)
        expect(Number(response.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1)
        expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
      }
    }
  )

  it.each([
    ['the location object was reset (a deploy)', 'loc-restarts', 'location', 'sublease-calls'],
    ['the root object lost one call to a retryable error', 'flaky-once', 'root', 'reserve-calls'],
  ] as const)(
    '%s: the call is asked again once and the request decided',
    async (_case, fault, tier, kind) => {
      const tiers = leasedThrough(fault, 'closed')
      const { send } = tiers
      const statuses = []
      for (let n = 0; n < 3; n++) {
        const response = await send()
        statuses.push(response.status)
        expect(response.headers.get(UNENFORCED_HEADER)).toBeNull()
      }
      expect(statuses).toEqual([200, 200, 200])
      // The lost call and the one asked again: the failure happened, and cost one retry.
      expect(await tiers[tier].leaseCalls(kind)).toBeGreaterThanOrEqual(2)
    }
  )
})
