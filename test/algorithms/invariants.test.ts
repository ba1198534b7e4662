import { describe, expect, it } from 'vitest'
import { runAlgorithm, type Policy } from '../../src/algorithms'

/** A seeded pseudo-random generator (mulberry32), so every run sees the same timeline. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Bursty arrivals over `spanMs`: quiet stretches and floods. */
function timeline(seed: number, count: number, spanMs: number): number[] {
  const next = random(seed)
  const times: number[] = []
  let t = 1_700_000_000_000
  for (let i = 0; i < count; i++) {
    t += next() < 0.1 ? Math.floor(next() * spanMs) / 10 : Math.floor(next() * 20)
    times.push(Math.floor(t))
  }
  return times
}

function admitted(policy: Policy, times: number[]): number[] {
  let state: unknown
  const allowed: number[] = []
  for (const t of times) {
    const outcome = runAlgorithm(state, policy, t, 1)
    state = outcome.state
    if (outcome.decision.allowed) allowed.push(t)
  }
  return allowed
}

/** The most admitted requests in any span of `windowMs` (two pointers over sorted times). */
function maxInAnyWindow(times: number[], windowMs: number): number {
  let best = 0
  let start = 0
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++
    best = Math.max(best, end - start + 1)
  }
  return best
}

describe('invariants over generated timelines', () => {
  it.each([1, 2, 3, 4, 5])(
    'token bucket never admits more than burst + rate × span (seed %i)',
    (seed) => {
      const policy: Policy = { algorithm: 'token-bucket', limit: 10, periodMs: 1_000, burst: 15 }
      const allowed = admitted(policy, timeline(seed, 5_000, 5_000))
      for (const span of [100, 1_000, 3_000]) {
        expect(maxInAnyWindow(allowed, span)).toBeLessThanOrEqual(
          15 + Math.ceil((10 * span) / 1_000)
        )
      }
    }
  )

  it.each([1, 2, 3, 4, 5])(
    'sliding window never admits twice the limit in any window (seed %i)',
    (seed) => {
      const policy: Policy = { algorithm: 'sliding-window', limit: 50, periodMs: 1_000 }
      const allowed = admitted(policy, timeline(seed, 5_000, 5_000))
      // A fixed window can admit 2× at a boundary; the weighted previous window keeps the
      // sliding counter's worst case well below that.
      expect(maxInAnyWindow(allowed, 1_000)).toBeLessThan(2 * 50)
      // Within one aligned window it is exact.
      const perWindow = new Map<number, number>()
      for (const t of allowed)
        perWindow.set(Math.floor(t / 1_000), (perWindow.get(Math.floor(t / 1_000)) ?? 0) + 1)
      expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(50)
    }
  )
})
