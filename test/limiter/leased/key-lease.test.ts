import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { newKeyLease, unitsDueInMs, type HeldLot } from '../../../src/limiter/leased/key-lease'

const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 100, periodMs: 60_000 }
/** Units held, spendable here from `validFromMs` (this lessee's clock the root's). */
const lot = (units: number, validFromMs: number): HeldLot => ({
  units,
  chargedAtMs: 0,
  validFromMs,
  validUntilMs: validFromMs + 60_000,
  epoch: 'e',
  hereFromMs: validFromMs,
  hereUntilMs: validFromMs + 60_000,
})

describe('newKeyLease', () => {
  it('holds nothing, has measured nothing and assumes the horizon it is given', () => {
    const lease = newKeyLease({ ruleId: 'r', key: 'k', policy }, 250, 1_000)
    expect(lease).toMatchObject({ ruleId: 'r', key: 'k', lots: [], horizonMs: 250 })
    expect(lease.lastUsedMs).toBe(1_000)
    expect(lease.rate).toBeUndefined()
    expect(lease.pending).toBeUndefined()
    // Every field present, each lease of one shape (the request path reads them all).
    expect(Object.keys(lease)).toContain('pending')
    expect(Object.keys(lease)).toContain('snapshot')
  })
})

describe('unitsDueInMs', () => {
  const base = () => newKeyLease({ ruleId: 'r', key: 'k', policy }, 250, 0)

  it('is 0 when the lessee may ask now and nothing is in flight', () => {
    expect(unitsDueInMs(base(), 500)).toBe(0)
  })

  it('is the rest of a round trip for a reservation in flight', () => {
    const lease = { ...base(), roundTripMs: 40 }
    lease.pending = { promise: new Promise(() => {}), sinceMs: 100, minUnits: 1 }
    expect(unitsDueInMs(lease, 110)).toBe(30)
  })

  it("is the lessor's wait and a round trip when it said to wait", () => {
    const lease = { ...base(), roundTripMs: 40, quietUntilMs: 300 }
    expect(unitsDueInMs(lease, 100)).toBe(240)
  })

  it('is when units held for later become spendable, if that is sooner', () => {
    const lease = { ...base(), roundTripMs: 40, quietUntilMs: 300, lots: [lot(5, 150)] }
    expect(unitsDueInMs(lease, 100)).toBe(50)
    // Spent units for later do not count.
    expect(unitsDueInMs({ ...lease, lots: [lot(0, 150)] }, 100)).toBe(240)
  })
})
