import { describe, expect, it } from 'vitest'
import { slidingLog, type SlidingLogPolicy, type SlidingLogState } from '../../src/algorithms'
import { drive } from '../support/drive'

const policy: SlidingLogPolicy = { algorithm: 'sliding-log', limit: 3, periodMs: 1_000 }
const T0 = 1_700_000_000_000
const burst = (state: SlidingLogState | undefined, count: number, nowMs: number) =>
  drive(slidingLog, policy, state, count, nowMs)

describe('sliding window log', () => {
  it('is exact: never more than the limit in any window, boundaries included', () => {
    let { state } = burst(undefined, 3, T0 + 900)
    // A fixed window would reset at T0 + 1000; the log still sees the three from T0 + 900.
    expect(burst(state, 1, T0 + 1_000).allowed).toBe(0)
    expect(burst(state, 1, T0 + 1_899).allowed).toBe(0)
    ;({ state } = burst(state, 3, T0 + 1_900))
    expect(state?.entries).toEqual([
      [T0 + 1_900, 1],
      [T0 + 1_900, 1],
      [T0 + 1_900, 1],
    ])
  })

  it('retryAfterMs is when enough of the oldest entries leave the window', () => {
    let state: SlidingLogState | undefined
    ;({ state } = burst(state, 1, T0))
    ;({ state } = burst(state, 2, T0 + 400))
    const denied = slidingLog.charge(state, policy, T0 + 500, 2)
    expect(denied.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 900 })
    expect(slidingLog.charge(state, policy, T0 + 1_399, 2).decision.allowed).toBe(false)
    expect(slidingLog.charge(state, policy, T0 + 1_400, 2).decision.allowed).toBe(true)
  })

  it('denies without writing, and reports when the log empties', () => {
    const { state } = burst(undefined, 3, T0)
    const denied = slidingLog.charge(state, policy, T0 + 10, 1)
    expect(denied.state).toBe(state)
    expect(denied.decision.resetAtMs).toBe(T0 + 1_000)
    expect(slidingLog.expiresAtMs(state!, policy)).toBe(T0 + 1_000)
  })

  it('keeps at most one entry per admitted unit still in the window', () => {
    const big: SlidingLogPolicy = { algorithm: 'sliding-log', limit: 100, periodMs: 1_000 }
    let state: SlidingLogState | undefined
    for (let t = 0; t < 10_000; t += 3) state = slidingLog.charge(state, big, T0 + t, 1).state
    expect(state!.entries.length).toBeLessThanOrEqual(100)
  })
})
