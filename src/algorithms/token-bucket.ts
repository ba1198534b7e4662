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
 * Leased quotas take tokens for lessees to spend until a time (`held`). Until then the bucket
 * counts them as still in it, refilling only up to `burst` less them: whenever a lessee spends
 * them, what was admitted in any stretch of time stays within what an exact bucket admits.
 *
 * **Pro:** two numbers of state, admits bursts up to `burst` while holding the long-run rate.
 * **Con:** a full bucket lets `burst` requests through at once, which an origin must absorb.
 */
import type { Decision } from '../types'
import { addHeld, heldUnits, lapseHeld, releaseHeld, type Held } from './held'
import { ceilMs, EPSILON, type Algorithm, type TokenBucketPolicy } from './types'

/** The tokens left at the last update. */
export interface TokenBucketState {
  /** Tokens in the bucket at `updatedAtMs` (may be fractional), held ones not among them. */
  tokens: number
  /** When `tokens` was computed (Unix ms). */
  updatedAtMs: number
  /** Tokens lessees hold, by when they lapse (leased quotas), if any. */
  held?: Held
}

/** Tokens per ms. */
function rate(policy: TokenBucketPolicy): number {
  return policy.limit / policy.periodMs
}

/**
 * The bucket as it stands at `nowMs`; a clock that went back refills nothing. While tokens are
 * held the bucket fills only up to `burst` less them; as each hold lapses, the cap rises.
 */
export function refill(
  state: TokenBucketState | undefined,
  policy: TokenBucketPolicy,
  nowMs: number
): TokenBucketState {
  if (!state) return { tokens: policy.burst, updatedAtMs: nowMs }
  let { tokens, updatedAtMs } = state
  const grow = (toMs: number, cap: number) => {
    tokens = Math.min(cap, tokens + Math.max(0, toMs - updatedAtMs) * rate(policy))
    updatedAtMs = Math.max(updatedAtMs, toMs)
  }
  const held = lapseHeld(state.held, nowMs, (atMs, stillHeld) =>
    grow(atMs, policy.burst - stillHeld)
  )
  grow(nowMs, policy.burst - heldUnits(held))
  return held ? { tokens, updatedAtMs, held } : { tokens, updatedAtMs }
}

/** Ms until `tokens` grows to `target`. */
function msUntil(tokens: number, target: number, policy: TokenBucketPolicy): number {
  return Math.max(0, ceilMs((target - tokens) / rate(policy)))
}

/** The token bucket. */
export const tokenBucket: Algorithm<TokenBucketPolicy, TokenBucketState> = {
  charge(state, policy, nowMs, cost, hold) {
    const bucket = refill(state, policy, nowMs)
    const allowed = bucket.tokens + EPSILON >= cost
    const left = allowed ? Math.max(0, bucket.tokens - cost) : bucket.tokens
    let retryAfterMs = 0
    if (!allowed) {
      // A cost above the capacity never fits; point at a full bucket, the best there is.
      const target = Math.min(cost, policy.burst)
      retryAfterMs = Math.max(1, msUntil(bucket.tokens, target, policy))
    }
    const held =
      hold?.untilMs === undefined ? bucket.held : addHeld(bucket.held, hold.untilMs, cost)
    const decision: Decision = {
      allowed,
      limit: policy.burst,
      remaining: Math.floor(left + EPSILON),
      resetAtMs: bucket.updatedAtMs + msUntil(left + heldUnits(held), policy.burst, policy),
      retryAfterMs,
    }
    const taken = { tokens: left, updatedAtMs: bucket.updatedAtMs, ...(held ? { held } : {}) }
    return { state: allowed && cost > 0 ? taken : state, decision }
  },

  expiresAtMs(state, policy) {
    // Held tokens lapse by their time at the latest, and the bucket is full again after that.
    const lapsedMs = Math.max(state.updatedAtMs, ...(state.held ?? []).map(([atMs]) => atMs))
    const atLapse = refill(state, policy, lapsedMs)
    return lapsedMs + msUntil(atLapse.tokens, policy.burst, policy)
  },

  refund(state, policy, nowMs, units, lot) {
    const bucket = refill(state, policy, nowMs)
    // Only tokens still held come back: a lapsed hold's tokens count as spent.
    const { held, released } = releaseHeld(bucket.held, lot.validUntilMs, units)
    if (released === 0) return state
    const tokens = bucket.tokens + released
    return held ? { ...bucket, tokens, held } : { tokens, updatedAtMs: bucket.updatedAtMs }
  },

  spent(state, policy, nowMs, units, lot) {
    const bucket = refill(state, policy, nowMs)
    const { held, released } = releaseHeld(bucket.held, lot.validUntilMs, units)
    if (released === 0) return state
    return held ? { ...bucket, held } : { tokens: bucket.tokens, updatedAtMs: bucket.updatedAtMs }
  },
}
