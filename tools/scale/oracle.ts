/**
 * @module tools/scale/oracle
 * Exact limits, written apart from `src/algorithms/` so that they check it rather than repeat
 * it: each says whether a request fits at an instant, and charges what was admitted. Fed every
 * admission in time order, an admission that does not fit is one the exact algorithm would have
 * refused: an over-admission. It is not charged (the oracle's state stays that of the exact
 * algorithm), so the count is the excess itself.
 *
 * - sliding window: previous window's count × its share still inside + current count + cost ≤ limit
 * - fixed window: count in the aligned window + cost ≤ limit
 * - token bucket: the admitted stream conforms to a bucket of `burst` refilled at the rate,
 *   replayed from a full bucket
 * - GCRA: the same conformance in virtual-scheduling form (a request may start at most `burst`
 *   emission intervals ahead of its theoretical time)
 */
import type { LeasablePolicy } from '../../src/algorithms/reserve'

/** Slack for fractional counts: a boundary within it is the boundary. */
const SLACK = 1e-9

/** An exact limit. */
export interface Oracle {
  /** Whether a request of `cost` fits at `atMs` (charges nothing). */
  fits(atMs: number, cost: number): boolean
  /** Charges an admission if it fits; `false` (nothing charged) if it does not. */
  admit(atMs: number, cost: number): boolean
  /** How many requests of cost 1 fit at `atMs`, one after another. */
  room(atMs: number): number
  /** Charges units whether they fit or not (what another limit admitted, or carried over). */
  force(atMs: number, cost: number): void
  /** The most units it holds: a window's limit, a bucket's burst. */
  readonly capacity: number
  /**
   * An oracle of another limit of the same algorithm and period (an edited limit or burst) that
   * has seen what this one has: its count, its tokens.
   */
  continued(policy: LeasablePolicy, atMs: number): Oracle
}

/**
 * The exact limit of a policy.
 *
 * @param policy - the limit
 */
export function oracleFor(policy: LeasablePolicy): Oracle {
  switch (policy.algorithm) {
    case 'sliding-window':
      return slidingWindow(policy.limit, policy.periodMs)
    case 'fixed-window':
      return fixedWindow(policy.limit, policy.periodMs)
    case 'token-bucket':
      return tokenBucket(policy.limit / policy.periodMs, policy.burst)
    case 'gcra':
      return gcra(policy.periodMs / policy.limit, policy.burst)
  }
}

function slidingWindow(
  limit: number,
  periodMs: number,
  seen = { start: Number.NEGATIVE_INFINITY, previous: 0, current: 0 }
): Oracle {
  let { start, previous, current } = seen
  const roll = (atMs: number) => {
    const window = Math.floor(atMs / periodMs) * periodMs
    if (window === start) return
    previous = window - start === periodMs ? current : 0
    current = 0
    start = window
  }
  const estimate = (atMs: number) => {
    roll(atMs)
    return (previous * (periodMs - (atMs - start))) / periodMs + current
  }
  const fits = (atMs: number, cost: number) => estimate(atMs) + cost <= limit + SLACK
  return {
    fits,
    capacity: limit,
    room: (atMs) => Math.max(0, Math.floor(limit + SLACK - estimate(atMs))),
    admit(atMs, cost) {
      if (!fits(atMs, cost)) return false
      current += cost
      return true
    },
    force(atMs, cost) {
      roll(atMs)
      current += cost
    },
    continued: (policy) => slidingWindow(policy.limit, periodMs, { start, previous, current }),
  }
}

function fixedWindow(
  limit: number,
  periodMs: number,
  seen = { start: Number.NEGATIVE_INFINITY, count: 0 }
): Oracle {
  let { start, count } = seen
  const fits = (atMs: number, cost: number) => {
    const window = Math.floor(atMs / periodMs) * periodMs
    if (window !== start) [start, count] = [window, 0]
    return count + cost <= limit
  }
  return {
    fits,
    capacity: limit,
    room: (atMs) => (fits(atMs, 0) ? Math.max(0, limit - count) : 0),
    admit(atMs, cost) {
      if (!fits(atMs, cost)) return false
      count += cost
      return true
    },
    force(atMs, cost) {
      fits(atMs, 0)
      count += cost
    },
    continued: (policy) => fixedWindow(policy.limit, periodMs, { start, count }),
  }
}

function tokenBucket(
  perMs: number,
  burst: number,
  seen: { tokens: number; lastMs: number | undefined } = { tokens: burst, lastMs: undefined }
): Oracle {
  let { tokens, lastMs } = seen
  const fits = (atMs: number, cost: number) => {
    if (lastMs !== undefined) tokens = Math.min(burst, tokens + (atMs - lastMs) * perMs)
    lastMs = atMs
    return tokens + SLACK >= cost
  }
  return {
    fits,
    capacity: burst,
    room: (atMs) => (fits(atMs, 0) ? Math.max(0, Math.floor(tokens + SLACK)) : 0),
    admit(atMs, cost) {
      if (!fits(atMs, cost)) return false
      tokens -= cost
      return true
    },
    force(atMs, cost) {
      fits(atMs, 0)
      tokens -= cost
    },
    continued(policy) {
      const next = 'burst' in policy ? policy.burst : policy.limit
      return tokenBucket(policy.limit / policy.periodMs, next, {
        tokens: Math.min(next, tokens),
        lastMs,
      })
    },
  }
}

function gcra(
  intervalMs: number,
  burst: number,
  seen = { tatMs: Number.NEGATIVE_INFINITY }
): Oracle {
  let { tatMs } = seen
  const next = (atMs: number, cost: number) => Math.max(tatMs, atMs) + cost * intervalMs
  const fits = (atMs: number, cost: number) =>
    next(atMs, cost) - atMs <= burst * intervalMs * (1 + SLACK)
  return {
    fits,
    capacity: burst,
    room: (atMs) =>
      Math.max(0, Math.floor(burst * (1 + SLACK) - (next(atMs, 0) - atMs) / intervalMs)),
    admit(atMs, cost) {
      if (!fits(atMs, cost)) return false
      tatMs = next(atMs, cost)
      return true
    },
    force(atMs, cost) {
      tatMs = next(atMs, cost)
    },
    // Its backlog in units, at the new rate.
    continued(policy, atMs) {
      const interval = policy.periodMs / policy.limit
      const backlogMs = Math.max(0, tatMs - atMs)
      return gcra(interval, 'burst' in policy ? policy.burst : policy.limit, {
        tatMs: atMs + (backlogMs * interval) / intervalMs,
      })
    },
  }
}
