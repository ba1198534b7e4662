/**
 * @module rules/quota
 * What a policy advertises to clients in `RateLimit-Policy`.
 */
import type { Policy } from '../algorithms'

/** RFC 8941 integers have at most 15 digits; only absurd bucket shapes get near that. */
const MAX_SF_INTEGER = 999_999_999_999_999

/**
 * `q` and `w` of a policy. A window (fixed, sliding, log) holds `limit` per `period`. A bucket
 * (token, leaky, GCRA) of `burst` refilling `limit` per period holds `burst` units per the time it
 * takes to refill from empty: that is the quota a client can plan with.
 *
 * @param policy - the policy in force for the request (a tier may have changed its limit)
 * @returns the quota and its window in whole seconds (at least 1)
 */
export function advertisedQuota(policy: Policy): { quota: number; windowSeconds: number } {
  const quota = 'burst' in policy ? policy.burst : policy.limit
  const windowMs =
    'burst' in policy ? (policy.burst * policy.periodMs) / policy.limit : policy.periodMs
  const windowSeconds = Math.min(MAX_SF_INTEGER, Math.max(1, Math.ceil(windowMs / 1000)))
  return { quota, windowSeconds }
}
