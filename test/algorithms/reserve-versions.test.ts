import { describe, expect, it } from 'vitest'
import { chargeKey, type KeyState, type Policy } from '../../src/algorithms'
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { reserveUnderVersions } from '../../src/algorithms/reserve-versions'

const MINUTE = 60_000
const T0 = 1_700_000_040_000 // a minute boundary
const before: LeasablePolicy = { algorithm: 'sliding-window', limit: 100, periodMs: MINUTE }
const after: LeasablePolicy = { algorithm: 'sliding-window', limit: 200, periodMs: 2 * MINUTE }

/** The key after `units` units charged at once at `nowMs`. */
function spent(policy: Policy, units: number, nowMs = T0): KeyState | undefined {
  return chargeKey(undefined, policy, nowMs, units).state
}

describe('reserveUnderVersions', () => {
  it('grants what the version with the least room has, and says the key is short', () => {
    const other = { policy: before, state: spent(before, 90) }
    const { reserved, others } = reserveUnderVersions(undefined, after, [other], T0, {
      units: 40,
      minUnits: 1,
    })
    expect(reserved.granted).toBe(10)
    // Short: a lessee that was told otherwise queued its requests for room that comes in at
    // the rate, not denying any (latency without end at 1.1× demand).
    expect(reserved.scarce).toBe(true)
    expect(chargeKey(others[0], before, T0, 1).decision.allowed).toBe(false)
  })

  it('is not short when every version has room for the ask', () => {
    const other = { policy: before, state: spent(before, 10) }
    const { reserved } = reserveUnderVersions(undefined, after, [other], T0, {
      units: 40,
      minUnits: 1,
    })
    expect(reserved.granted).toBe(40)
    expect(reserved.scarce).toBe(false)
  })

  it('denies as the strictest version does when none has the need', () => {
    const other = { policy: before, state: spent(before, 100) }
    const { reserved } = reserveUnderVersions(undefined, after, [other], T0, {
      units: 40,
      minUnits: 5,
    })
    expect(reserved.granted).toBe(0)
    expect(reserved.scarce).toBe(true)
    expect(reserved.decision.allowed).toBe(false)
  })
})
