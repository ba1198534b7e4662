/**
 * @module limiter/lease-sizing
 * How many units an isolate reserves at once for a key, and what it may still spend: pure
 * arithmetic on what the lease book has observed.
 */
import { isWindowed, sameLeaseWindow, windowOf, type LeasablePolicy } from '../algorithms/reserve'
import type { Policy } from '../algorithms'

/** A batch covers this much of the key's observed traffic in this isolate (ms). */
export const HORIZON_MS = 500

/** A batch is at most this share of the key's capacity (limit, or burst for a bucket). */
export const CAP_SHARE = 1 / 8

/**
 * The most units one isolate holds for a key: {@link CAP_SHARE} of its capacity, at least 1.
 *
 * @param policy - a leasable policy
 */
export function batchCap(policy: LeasablePolicy): number {
  const capacity = 'burst' in policy ? policy.burst : policy.limit
  return Math.max(1, Math.floor(capacity * CAP_SHARE))
}

/**
 * The batch to hold: the units the key's observed rate spends in {@link HORIZON_MS} (less when
 * its window ends sooner), at most {@link batchCap}; 0 for a key that spends less than one unit
 * in that time (it reserves each request's cost on demand, and holds nothing).
 *
 * @param policy - a leasable policy
 * @param ratePerMs - units this isolate spent per ms lately, if known
 * @param nowMs - the isolate's clock
 */
export function batchSize(
  policy: LeasablePolicy,
  ratePerMs: number | undefined,
  nowMs: number
): number {
  const horizonMs = isWindowed(policy)
    ? Math.min(HORIZON_MS, windowOf(policy, nowMs) + policy.periodMs - nowMs)
    : HORIZON_MS
  const wanted = (ratePerMs ?? 0) * horizonMs
  return wanted < 1 ? 0 : Math.min(batchCap(policy), Math.ceil(wanted))
}

/**
 * Whether handing units back can do any good: a window's units only while their window lasts;
 * tokens and GCRA slots always (the object caps what it takes back).
 *
 * @param policy - the policy they were reserved under
 * @param chargedAtMs - when they were
 * @param nowMs - now
 */
export function worthRefunding(
  policy: LeasablePolicy,
  chargedAtMs: number,
  nowMs: number
): boolean {
  return sameLeaseWindow(policy, chargedAtMs, nowMs)
}

/**
 * Whether two policies count a key the same way, so that units reserved under one may be
 * spent under the other. A rules change that alters any of these drops the lease.
 *
 * @param a - one policy
 * @param b - another
 */
export function samePolicy(a: Policy, b: Policy): boolean {
  if (a === b) return true
  return (
    a.algorithm === b.algorithm &&
    a.limit === b.limit &&
    a.periodMs === b.periodMs &&
    a.penaltyMs === b.penaltyMs &&
    ('burst' in a ? a.burst : undefined) === ('burst' in b ? b.burst : undefined)
  )
}
