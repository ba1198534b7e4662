import { describe, expect, it } from 'vitest'
import { fixedWindow, type FixedWindowPolicy, type FixedWindowState } from '../../src/algorithms'
import { drive } from '../support/drive'

const MINUTE = 60_000
const policy: FixedWindowPolicy = { algorithm: 'fixed-window', limit: 3, periodMs: MINUTE }
const T0 = 1_700_000_040_000 // a minute boundary
const burst = (state: FixedWindowState | undefined, count: number, nowMs: number, p = policy) =>
  drive(fixedWindow, p, state, count, nowMs)

describe('fixed window', () => {
  it('allows the limit per epoch-aligned window, then denies until the next window', () => {
    const { state, allowed } = burst(undefined, 5, T0 + 10_000)
    expect(allowed).toBe(3)
    const denied = fixedWindow.charge(state, policy, T0 + 59_999, 1)
    expect(denied.decision).toEqual({
      allowed: false,
      limit: 3,
      remaining: 0,
      resetAtMs: T0 + MINUTE,
      retryAfterMs: 1,
    })
    expect(burst(state, 5, T0 + MINUTE).allowed).toBe(3)
  })

  it('admits twice the limit around a boundary: the known weakness', () => {
    const { state } = burst(undefined, 3, T0 + 59_000)
    expect(burst(state, 3, T0 + 61_000).allowed).toBe(3)
  })

  it('does not count a denied request, unless countDenied (Envoy) says so', () => {
    const { state } = burst(undefined, 2, T0)
    expect(fixedWindow.charge(state, policy, T0, 5).state).toBe(state)
    const envoy = { ...policy, countDenied: true }
    const counted = fixedWindow.charge(state, envoy, T0, 5)
    expect(counted.decision.allowed).toBe(false)
    expect(counted.state).toEqual({ windowStartMs: T0, count: 7 })
    expect(fixedWindow.charge(counted.state, envoy, T0, 1).decision.allowed).toBe(false)
  })

  it('with limit 0 refuses every charge but answers a look', () => {
    const zero = { ...policy, limit: 0 }
    expect(fixedWindow.charge(undefined, zero, T0, 1).decision.allowed).toBe(false)
    expect(fixedWindow.charge(undefined, zero, T0, 0).decision).toMatchObject({
      allowed: true,
      remaining: 0,
    })
  })

  it('keeps its window when the clock goes back, and expires at the window end', () => {
    const { state } = burst(undefined, 3, T0 + 30_000)
    expect(fixedWindow.charge(state, policy, T0 - 5 * MINUTE, 1).decision.allowed).toBe(false)
    expect(fixedWindow.expiresAtMs(state!, policy)).toBe(T0 + MINUTE)
  })
})
