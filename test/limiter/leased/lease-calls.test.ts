import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { rootUpstream } from '../../../src/limiter/leased/lease-calls'
import type { ObjectNamespace } from '../../../src/limiter/calls/object-name'
import { ClientStats } from '../../../src/limiter/calls/stats'

const policy: LeasablePolicy = {
  algorithm: 'token-bucket',
  limit: 3_600,
  periodMs: 3_600_000,
  burst: 100,
}

/** The test object that fails as its key's name says, as a location object's root. */
const flakyRoot = (timeoutMs: number) =>
  rootUpstream(env.FLAKY_LIMITER as unknown as ObjectNamespace, {
    stats: new ClientStats(0),
    timeoutMs,
    lessee: 'location-1',
  })

describe("a lessee's calls to its lessor", () => {
  it.each([
    // The first try reached the object and failed (its answer lost): the second carries none.
    ['flaky-once', [2, 0]],
    // Its answer lost, the first try may have applied them: no later try carries them, not
    // even the one after the lessor refused the retry as overloaded.
    ['lost-then-overloaded', [2, 0, 0]],
    // Refused as overloaded before it ran: the next try carries them.
    ['refused-once', [2, 2]],
  ])(
    'hands back what an ask carries at most once when a try is %s',
    { timeout: 10_000 },
    async (fault, reports) => {
      const lease = { ruleId: 'lease-calls', key: `${fault}-reports` }
      const root = flakyRoot(5_000)
      const lot = { units: 3, chargedAtMs: 0, validFromMs: 0, validUntilMs: 1, epoch: 'e' }
      const reservation = await root.reserve(lease, policy, {
        units: 5,
        minUnits: 1,
        spent: [lot],
        returned: [lot],
      })
      expect(reservation.granted).toBeGreaterThan(0)
      expect(await env.FLAKY_LIMITER.getByName(lease.key).reports()).toEqual(reports)
    }
  )
  it('asks an overloaded lessor again only after its queue could drain: at most twice in 600 ms', async () => {
    const lease = { ruleId: 'lease-calls', key: 'overloaded-backoff' }
    const root = flakyRoot(600)
    const startMs = Date.now()
    const failure = await root
      .reserve(lease, policy, { units: 5, minUnits: 1 })
      .catch((error: unknown) => error)
    expect(failure).toMatchObject({ reason: 'overloaded' })
    // Asked again at once, a refused call finds the queue still full: each wait is at least half
    // of 250 ms, doubling.
    const calls = await env.FLAKY_LIMITER.getByName(lease.key).leaseCalls('reserve-calls')
    expect(calls).toBeGreaterThanOrEqual(2)
    expect(calls).toBeLessThanOrEqual(3)
    expect(Date.now() - startMs).toBeGreaterThanOrEqual(125 * (2 ** (calls - 1) - 1))
  })
})
