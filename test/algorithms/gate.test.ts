import { describe, expect, it } from 'vitest'
import { chargeKey, type Policy } from '../../src/algorithms'
import { gateKey } from '../../src/algorithms/gate'

const T = 1_700_000_000_000
const window3: Policy = { algorithm: 'sliding-window', limit: 3, periodMs: 60_000 }

describe('gateKey: a check that charges only a refusal', () => {
  it.each<Policy>([
    window3,
    { algorithm: 'fixed-window', limit: 3, periodMs: 60_000 },
    { algorithm: 'token-bucket', limit: 3, periodMs: 60_000, burst: 3 },
    { algorithm: 'gcra', limit: 3, periodMs: 60_000, burst: 3 },
    { algorithm: 'sliding-log', limit: 3, periodMs: 60_000 },
  ])(
    'leaves an allowed key as it is and reports what is left before the request (%o)',
    (policy) => {
      let key = chargeKey(undefined, policy, T, 1).state
      const gated = gateKey(key, policy, T + 1, 1)
      expect(gated.state).toBe(key)
      expect(gated.decision).toMatchObject({ allowed: true, remaining: 2 })
      // Two more charges fill it; the check then refuses, and charging would refuse too.
      key = chargeKey(chargeKey(key, policy, T + 2, 1).state, policy, T + 3, 1).state
      expect(gateKey(key, policy, T + 4, 1).decision.allowed).toBe(false)
      expect(chargeKey(key, policy, T + 4, 1).decision.allowed).toBe(false)
    }
  )

  it('starts the penalty lock when it refuses, as a charge would', () => {
    const locking: Policy = { ...window3, penaltyMs: 15 * 60_000 }
    let key = chargeKey(undefined, locking, T, 3).state
    const refused = gateKey(key, locking, T + 1_000, 1)
    expect(refused.decision).toMatchObject({ allowed: false, retryAfterMs: 15 * 60_000 })
    key = refused.state
    // Past the window, still locked.
    expect(gateKey(key, locking, T + 120_000, 1).decision.allowed).toBe(false)
    expect(gateKey(key, locking, T + 1_000 + 15 * 60_000, 1).decision.allowed).toBe(true)
  })
})
