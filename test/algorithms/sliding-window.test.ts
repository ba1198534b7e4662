import { describe, expect, it } from 'vitest'
import { drive } from '../support/drive'
import {
  slidingWindow,
  type SlidingWindowPolicy,
  type SlidingWindowState,
} from '../../src/algorithms'

const MINUTE = 60_000
const policy: SlidingWindowPolicy = { algorithm: 'sliding-window', limit: 10, periodMs: MINUTE }
const T0 = 1_700_000_040_000 // a minute boundary
const at = (ms: number) => T0 + ms

const burst = (state: SlidingWindowState | undefined, count: number, nowMs: number) =>
  drive(slidingWindow, policy, state, count, nowMs)

describe('sliding-window counter', () => {
  it('allows up to the limit in a fresh window, then denies', () => {
    const { state, allowed } = burst(undefined, 15, at(0))
    expect(allowed).toBe(10)
    expect(state).toEqual({ windowStartMs: T0, current: 10, previous: 0 })
  })

  it('reports remaining, the full reset and no retry while allowed', () => {
    const { decision } = slidingWindow.charge(undefined, policy, at(5_000), 1)
    expect(decision).toEqual({
      allowed: true,
      limit: 10,
      remaining: 9,
      resetAtMs: T0 + 2 * MINUTE,
      retryAfterMs: 0,
    })
  })

  it('matches the classic worked example: 42 previous, 18 current, 15 s in → 49.5 of 50', () => {
    const p: SlidingWindowPolicy = { algorithm: 'sliding-window', limit: 50, periodMs: MINUTE }
    const state: SlidingWindowState = { windowStartMs: T0, current: 18, previous: 42 }
    const first = slidingWindow.charge(state, p, at(15_000), 1)
    expect(first.decision.allowed).toBe(false) // 49.5 + 1 > 50
    expect(first.state).toBe(state)
    expect(first.decision.remaining).toBe(0)
    // 42 × (1 − x) + 18 + 1 ≤ 50 ⇔ x ≥ 11/42 of the window
    expect(first.decision.retryAfterMs).toBe(Math.ceil((MINUTE * 11) / 42) - 15_000)
  })

  it('weights the previous window by the share still inside the sliding window', () => {
    const state: SlidingWindowState = { windowStartMs: T0 - MINUTE, current: 10, previous: 0 }
    // 30 s into the next window, half of the previous 10 still count: 5 more fit.
    expect(burst(state, 10, at(30_000)).allowed).toBe(5)
    // 45 s in, a quarter (2.5) counts: 7 fit.
    expect(burst(state, 10, at(45_000)).allowed).toBe(7)
  })

  it.each([
    ['last ms of the window', MINUTE - 1, 0],
    ['first ms of the next window', MINUTE, 0],
    ['1/10 into the next window', MINUTE + 6_000, 1],
    ['two windows later', 2 * MINUTE, 10],
    ['a long idle gap (a day)', 86_400_000, 10],
  ])('at the %s, a full previous window admits %#', (_label, offset, expected) => {
    const full = burst(undefined, 10, at(0)).state
    expect(burst(full, 10, at(offset)).allowed).toBe(expected)
  })

  it('retryAfterMs points exactly at the first moment a request passes', () => {
    const full = burst(undefined, 10, at(20_000)).state
    const denied = slidingWindow.charge(full, policy, at(30_000), 1)
    expect(denied.decision.allowed).toBe(false)
    const passAt = at(30_000) + denied.decision.retryAfterMs
    expect(slidingWindow.charge(full, policy, passAt - 1, 1).decision.allowed).toBe(false)
    expect(slidingWindow.charge(full, policy, passAt, 1).decision.allowed).toBe(true)
  })

  it('denies a cost above what remains without charging it', () => {
    const { state } = burst(undefined, 7, at(0))
    const outcome = slidingWindow.charge(state, policy, at(1_000), 4)
    expect(outcome.decision.allowed).toBe(false)
    expect(outcome.state).toBe(state)
    expect(outcome.decision.remaining).toBe(3)
    expect(slidingWindow.charge(state, policy, at(1_000), 3).decision.allowed).toBe(true)
  })

  it('denies a cost above the limit and points at the full reset', () => {
    const outcome = slidingWindow.charge(undefined, policy, at(0), 11)
    expect(outcome.decision.allowed).toBe(false)
    expect(outcome.state).toBeUndefined()
    expect(outcome.decision.remaining).toBe(10)
    expect(outcome.decision.retryAfterMs).toBe(1)
    const { state } = burst(undefined, 3, at(0))
    const later = slidingWindow.charge(state, policy, at(10_000), 11)
    expect(later.decision.retryAfterMs).toBe(T0 + 2 * MINUTE - at(10_000))
  })

  it('cost 0 looks without charging, even at the limit', () => {
    const { state } = burst(undefined, 10, at(0))
    const outcome = slidingWindow.charge(state, policy, at(1), 0)
    expect(outcome.decision).toMatchObject({ allowed: true, remaining: 0 })
    expect(outcome.state).toBe(state)
  })

  it('treats a clock that went backwards as no time passing', () => {
    const { state } = burst(undefined, 10, at(50_000))
    const back = slidingWindow.charge(state, policy, at(50_000) - 3 * MINUTE, 1)
    expect(back.decision.allowed).toBe(false)
    expect(back.state).toBe(state)
    const { state: partial } = burst(undefined, 4, at(50_000))
    const allowed = slidingWindow.charge(partial, policy, at(10_000) - MINUTE, 1)
    expect(allowed.decision.allowed).toBe(true)
    expect(allowed.state).toEqual({ windowStartMs: T0, current: 5, previous: 0 })
  })

  it('handles a 365-day period without overflow', () => {
    const year: SlidingWindowPolicy = {
      algorithm: 'sliding-window',
      limit: 1_000_000_000,
      periodMs: 365 * 86_400_000,
    }
    const outcome = slidingWindow.charge(undefined, year, at(0), 1)
    expect(outcome.decision.allowed).toBe(true)
    expect(outcome.decision.remaining).toBe(999_999_999)
    expect(Number.isSafeInteger(outcome.decision.resetAtMs)).toBe(true)
    expect(slidingWindow.expiresAtMs(outcome.state!, year)).toBe(outcome.decision.resetAtMs)
  })

  it('expires one window after the last counted one', () => {
    const withCurrent = { windowStartMs: T0, current: 3, previous: 9 }
    const onlyPrevious = { windowStartMs: T0, current: 0, previous: 9 }
    expect(slidingWindow.expiresAtMs(withCurrent, policy)).toBe(T0 + 2 * MINUTE)
    expect(slidingWindow.expiresAtMs(onlyPrevious, policy)).toBe(T0 + MINUTE)
  })
})
