import { describe, expect, it } from 'vitest'
import { chargeKey, type KeyState } from '../../src/algorithms'
import { reserveKey, type LeasablePolicy } from '../../src/algorithms/reserve'

const T0 = 1_800_000_000_000 // a minute boundary
/** 100 a second: a ramp slot (50 ms) of the next window is 5 units. */
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000, periodMs: 60_000 }

/** A key whose current window is full (nothing before it), at `atMs`. */
function fullWindow(atMs: number): KeyState | undefined {
  return chargeKey(undefined, policy, atMs, 6_000).state
}

const rampAsk = { units: 0, minUnits: 0, nextUnits: 1_000, rampOnly: true }

/** The sliding estimate of what was really admitted, unit by unit, as an exact limiter sees it. */
function exactAdmits(previous: number, windowMs: number) {
  let current = 0
  return (atMs: number, units: number): boolean => {
    current += units
    return previous * (1 - (atMs - windowMs) / policy.periodMs) + current <= policy.limit + 1e-9
  }
}

describe('the next window’s ramp', () => {
  it('hands a full window’s key the room its previous gives back as it slides out, slot by slot, before it begins', () => {
    const reserved = reserveKey(fullWindow(T0 + 10_000), policy, T0 + 59_000, rampAsk)
    expect(reserved.granted).toBe(0)
    expect(reserved.next).toBeUndefined()
    const ramp = reserved.ramp ?? []
    expect(ramp).toHaveLength(40)
    expect(ramp.map((grant) => grant.granted)).toEqual(new Array(40).fill(5))
    expect(ramp.map((grant) => grant.validFromMs - (T0 + 60_000))).toEqual(
      Array.from({ length: 40 }, (_, j) => (j + 1) * 50)
    )
    // Every unit spent the moment its slot opens is one an exact limiter admits.
    const admits = exactAdmits(6_000, T0 + 60_000)
    for (const grant of ramp) expect(admits(grant.validFromMs, grant.granted)).toBe(true)
  })

  it('takes no room from the current window: a key with room left can still spend it all', () => {
    const key = chargeKey(undefined, policy, T0 + 10_000, 5_000).state
    const reserved = reserveKey(key, policy, T0 + 59_000, { ...rampAsk, nextUnits: 100 })
    expect(reserved.ramp?.reduce((sum, grant) => sum + grant.granted, 0)).toBe(100)
    expect(chargeKey(reserved.state, policy, T0 + 59_500, 1_000).decision.allowed).toBe(true)
  })

  it('leaves the next window’s start its limit: units charged at its start fit under each slot’s share', () => {
    const key = chargeKey(undefined, policy, T0 + 10_000, 3_000).state
    const { state } = reserveKey(key, policy, T0 + 59_000, rampAsk)
    // With 200 on the ramp at 5 per 50 ms, more at the start would push the slots past
    // (limit − next) × s / period.
    const ahead = reserveKey(state, policy, T0 + 59_000, { units: 0, minUnits: 0, nextUnits: 10 })
    expect(ahead.next).toBeUndefined()
  })
})
