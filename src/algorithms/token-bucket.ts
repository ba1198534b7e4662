/**
 * @module algorithms/token-bucket
 * Token bucket with lazy refill.
 *
 * The bucket holds at most `burst` tokens and gains `limit / period` tokens per ms. Instead of
 * a timer, the refill is computed from the time since the last update:
 *
 *     tokens = min(burst, tokens + (now − updatedAt) × limit / period)
 *
 * A request of `cost` units is allowed when `tokens ≥ cost`, and takes them.
 *
 * **Pro:** two numbers of state, admits bursts up to `burst` while holding the long-run rate.
 * **Con:** a full bucket lets `burst` requests through at once, which an origin must absorb.
 */
import type { Decision } from '../types'
import { ceilMs, EPSILON, type Algorithm, type TokenBucketPolicy } from './types'

/** The tokens left at the last update. */
export interface TokenBucketState {
  /** Tokens in the bucket at `updatedAtMs` (may be fractional). */
  tokens: number
  /** When `tokens` was computed (Unix ms). */
  updatedAtMs: number
}

/** Tokens per ms. */
function rate(policy: TokenBucketPolicy): number {
  return policy.limit / policy.periodMs
}

/** The bucket as it stands at `nowMs`; a clock that went back refills nothing. */
function refill(
  state: TokenBucketState | undefined,
  policy: TokenBucketPolicy,
  nowMs: number
): TokenBucketState {
  if (!state) return { tokens: policy.burst, updatedAtMs: nowMs }
  const elapsedMs = Math.max(0, nowMs - state.updatedAtMs)
  const tokens = Math.min(policy.burst, state.tokens + elapsedMs * rate(policy))
  return { tokens, updatedAtMs: Math.max(nowMs, state.updatedAtMs) }
}

/** Ms until `tokens` grows to `target`. */
function msUntil(tokens: number, target: number, policy: TokenBucketPolicy): number {
  return Math.max(0, ceilMs((target - tokens) / rate(policy)))
}

/** The token bucket. */
export const tokenBucket: Algorithm<TokenBucketPolicy, TokenBucketState> = {
  charge(state, policy, nowMs, cost) {
    const bucket = refill(state, policy, nowMs)
    const allowed = bucket.tokens + EPSILON >= cost
    const left = allowed ? Math.max(0, bucket.tokens - cost) : bucket.tokens
    let retryAfterMs = 0
    if (!allowed) {
      // A cost above the capacity never fits; point at a full bucket, the best there is.
      const target = Math.min(cost, policy.burst)
      retryAfterMs = Math.max(1, msUntil(bucket.tokens, target, policy))
    }
    const decision: Decision = {
      allowed,
      limit: policy.burst,
      remaining: Math.floor(left + EPSILON),
      resetAtMs: bucket.updatedAtMs + msUntil(left, policy.burst, policy),
      retryAfterMs,
    }
    const next = allowed && cost > 0 ? { tokens: left, updatedAtMs: bucket.updatedAtMs } : state
    return { state: next, decision }
  },

  expiresAtMs(state, policy) {
    return state.updatedAtMs + msUntil(state.tokens, policy.burst, policy)
  },
}
