import { describe, expect, it } from 'vitest'
import { chargeKey, keyStateExpiresAtMs, type KeyState, type Policy } from '../../src/algorithms'

const MINUTE = 60_000
const logins: Policy = {
  algorithm: 'sliding-window',
  limit: 5,
  periodMs: MINUTE,
  penaltyMs: 15 * MINUTE,
}
const T0 = 1_700_000_040_000

function attempts(key: KeyState | undefined, count: number, nowMs: number, policy = logins) {
  const allowed: boolean[] = []
  let decision
  for (let i = 0; i < count; i++) {
    const outcome = chargeKey(key, policy, nowMs, 1)
    key = outcome.state
    decision = outcome.decision
    allowed.push(decision.allowed)
  }
  return { key, allowed, decision: decision! }
}

describe('penalty box', () => {
  it('5 logins per minute, then the sixth locks the key for 15 minutes', () => {
    const { key, allowed, decision } = attempts(undefined, 6, T0)
    expect(allowed).toEqual([true, true, true, true, true, false])
    expect(key?.blockedUntilMs).toBe(T0 + 15 * MINUTE)
    expect(decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 15 * MINUTE })
    expect(decision.resetAtMs).toBe(T0 + 15 * MINUTE)
  })

  it('stays locked after the window has slid by, and Retry-After counts down the lock', () => {
    const { key } = attempts(undefined, 6, T0)
    const later = chargeKey(key, logins, T0 + 5 * MINUTE, 1)
    expect(later.decision).toMatchObject({ allowed: false, retryAfterMs: 10 * MINUTE })
    expect(later.state).toBe(key)
  })

  it('lets requests through again once the lock ends, with the counts it had', () => {
    const { key } = attempts(undefined, 6, T0)
    const free = chargeKey(key, logins, T0 + 15 * MINUTE, 1)
    expect(free.decision.allowed).toBe(true)
    expect(free.state?.blockedUntilMs).toBeUndefined()
  })

  it('does not lock without a penalty, and a look (cost 0) never locks', () => {
    const { key } = attempts(undefined, 6, T0, { ...logins, penaltyMs: undefined })
    expect(key?.blockedUntilMs).toBeUndefined()
    const { key: full } = attempts(undefined, 5, T0)
    expect(chargeKey(full, logins, T0, 0).state).toBe(full)
  })

  it('keeps a locked key until the lock ends, even past the window', () => {
    const { key } = attempts(undefined, 6, T0)
    expect(keyStateExpiresAtMs(key!, logins)).toBe(T0 + 15 * MINUTE)
    const { key: counted } = attempts(undefined, 2, T0)
    expect(keyStateExpiresAtMs(counted!, logins)).toBe(T0 + 2 * MINUTE)
  })
})
