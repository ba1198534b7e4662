import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  countMessage,
  messageOutcome,
  noticeDue,
  type LimitVerdict,
} from '../../src/algorithms/messages'
import type { SlidingWindowPolicy, SlidingWindowState } from '../../src/algorithms'

const policy: SlidingWindowPolicy = { algorithm: 'sliding-window', limit: 3, periodMs: 10_000 }

/** Counts a message at each time in turn; which were allowed, and each retry time. */
function run(times: number[], limit = policy) {
  let state: SlidingWindowState | undefined
  return times.map((nowMs) => {
    const outcome = countMessage(state, limit, nowMs)
    state = outcome.state
    return outcome.decision
  })
}

describe('countMessage', () => {
  it('allows `limit` messages in a window; the next is refused with its wait, and not counted', () => {
    const decisions = run([1_000, 1_001, 1_002, 1_003, 1_004])
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false])
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0])
    // In the next window 3 of the previous count ×(1 − elapsed/period): room for 1 at 1/3 in.
    expect(decisions[3]!.retryAfterMs).toBe(10_000 + 3_334 - 1_003)
  })

  it('allows a message again once the retry time has passed, not a ms before', () => {
    const denied = run([1_000, 1_000, 1_000, 1_000])[3]!
    const at = 1_000 + denied.retryAfterMs
    expect(run([1_000, 1_000, 1_000, at - 1])[3]!.allowed).toBe(false)
    expect(run([1_000, 1_000, 1_000, at])[3]!.allowed).toBe(true)
  })

  it('starts afresh after two idle periods', () => {
    expect(run([0, 1, 2, 20_000, 20_001, 20_002, 20_003]).map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
    ])
  })

  it('never allows more than `limit` within one aligned window, for any arrivals', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.integer({ min: 0, max: 50_000 }), { maxLength: 200 }),
        (limit, gaps) => {
          const limited = { ...policy, limit }
          let nowMs = 0
          const times = gaps.map((gap) => (nowMs += gap % 500))
          const perWindow = new Map<number, number>()
          run(times, limited).forEach((decision, i) => {
            if (!decision.allowed) return
            const window = Math.floor(times[i]! / limited.periodMs)
            perWindow.set(window, (perWindow.get(window) ?? 0) + 1)
          })
          for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(limit)
        }
      ),
      { seed: 13, numRuns: 300 }
    )
  })
})

describe('noticeDue', () => {
  it.each([
    [undefined, 0, true],
    [0, 9_999, false],
    [0, 10_000, true],
    // A clock that went back tells nothing more.
    [5_000, 4_000, false],
  ])('last notice at %s, now %s: %s', (lastMs, nowMs, due) => {
    expect(noticeDue(lastMs, policy, nowMs)).toBe(due)
  })
})

describe('messageOutcome', () => {
  const verdict = (
    ruleId: string,
    onExceed: 'close' | 'drop',
    allowed: boolean,
    fields: { retryAfterMs?: number; shadow?: boolean } = {}
  ): LimitVerdict => ({
    ruleId,
    onExceed,
    shadow: fields.shadow ?? false,
    decision: { allowed, retryAfterMs: fields.retryAfterMs ?? (allowed ? 0 : 1_000) },
  })

  it('forwards what every limit allows', () => {
    expect(messageOutcome([verdict('a', 'close', true), verdict('b', 'drop', true)])).toEqual({
      action: 'forward',
      wouldLimit: [],
    })
  })

  it('closes when any closing limit refuses, whatever the dropping ones say', () => {
    expect(
      messageOutcome([
        verdict('a', 'drop', false),
        verdict('b', 'close', false),
        verdict('c', 'close', false),
      ])
    ).toEqual({ action: 'close', ruleId: 'b', wouldLimit: [] })
  })

  it('drops naming the refusing rule with the longest wait', () => {
    expect(
      messageOutcome([
        verdict('a', 'drop', false, { retryAfterMs: 500 }),
        verdict('b', 'drop', false, { retryAfterMs: 2_000 }),
        verdict('c', 'close', true),
      ])
    ).toEqual({ action: 'drop', ruleId: 'b', retryAfterMs: 2_000, wouldLimit: [] })
  })

  it('only reports a rule in shadow', () => {
    expect(
      messageOutcome([verdict('a', 'close', false, { shadow: true }), verdict('b', 'drop', true)])
    ).toEqual({ action: 'forward', wouldLimit: ['a'] })
  })
})
