/**
 * @module test/support/bounds
 * The bounds each algorithm documents, checked on a stream of admissions: at most the limit in
 * any window (or aligned window) of one period, at most burst + rate × elapsed over any span.
 */
import { expect } from 'vitest'
import type { Policy } from '../../src/algorithms'

/** Float slack for bounds computed from rates. */
export const SLACK = 1e-6

/** A request the policy admitted: when, what it cost, and how long a shaper held it. */
export interface Admitted {
  atMs: number
  cost: number
  delayMs: number
}

/**
 * The most units admitted in any window `[t, t + windowMs)`, by two pointers over sorted times.
 *
 * @param items - admissions, in time order
 * @param windowMs - the window's length
 */
export function maxInAnyWindow(items: readonly Admitted[], windowMs: number): number {
  let best = 0
  let sum = 0
  let first = 0
  for (const item of items) {
    sum += item.cost
    while (item.atMs - items[first]!.atMs >= windowMs) sum -= items[first++]!.cost
    best = Math.max(best, sum)
  }
  return best
}

/**
 * Units per epoch-aligned window `[k·period, (k+1)·period)`.
 *
 * @param items - admissions
 * @param windowMs - the window's length
 */
export function perAlignedWindow(items: readonly Admitted[], windowMs: number): number[] {
  const sums = new Map<number, number>()
  for (const { atMs, cost } of items) {
    const k = Math.floor(atMs / windowMs)
    sums.set(k, (sums.get(k) ?? 0) + cost)
  }
  return [...sums.values()]
}

/**
 * Fails unless every run of admissions from i to j took at most burst + rate × (t_j − t_i).
 *
 * @param items - admissions, in time order
 * @param burst - the units allowed at once
 * @param ratePerMs - the rate
 */
export function expectRateBound(
  items: readonly Admitted[],
  burst: number,
  ratePerMs: number
): void {
  for (let i = 0; i < items.length; i++) {
    let sum = 0
    for (let j = i; j < items.length; j++) {
      sum += items[j]!.cost
      const bound = burst + ratePerMs * (items[j]!.atMs - items[i]!.atMs)
      if (sum > bound + SLACK)
        expect.fail(`${sum} units in [${items[i]!.atMs}, ${items[j]!.atMs}], bound ${bound}`)
    }
  }
}

/**
 * Fails unless the admissions keep within the bound `policy`'s algorithm documents: a window's
 * limit for windows and logs (a concurrency limit's leases never released: each lives a
 * period), the sliding window counter's limit per aligned window and under twice it in any
 * window, burst + rate × elapsed for buckets.
 *
 * @param items - admissions, in time order
 * @param policy - the policy they must keep to
 */
export function expectWithinBound(items: readonly Admitted[], policy: Policy): void {
  switch (policy.algorithm) {
    case 'sliding-log':
    case 'concurrency':
      expect(maxInAnyWindow(items, policy.periodMs)).toBeLessThanOrEqual(policy.limit)
      return
    case 'fixed-window':
      expect(Math.max(0, ...perAlignedWindow(items, policy.periodMs))).toBeLessThanOrEqual(
        policy.limit
      )
      return
    case 'sliding-window':
      expect(Math.max(0, ...perAlignedWindow(items, policy.periodMs))).toBeLessThanOrEqual(
        policy.limit
      )
      expect(maxInAnyWindow(items, policy.periodMs)).toBeLessThan(2 * policy.limit)
      return
    case 'token-bucket':
    case 'gcra':
    case 'leaky-bucket':
      expectRateBound(items, policy.burst, policy.limit / policy.periodMs)
      return
  }
}
