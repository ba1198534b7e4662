/**
 * @module algorithms/concurrency
 * Concurrency limit: at most `limit` requests per key in flight at the origin. Each admitted
 * request holds a lease on a slot until it is released, or until the lease runs out, so a slot
 * held by a Worker that died frees itself and no key is ever stuck. (Waiting in the queue for a
 * slot happens in the Durable Object; this module only decides and keeps the leases.)
 *
 * A denial's `retryAfterMs` is an estimate of when a slot frees, not the lease's worst case:
 * each release feeds how long its slot was held into a running mean, and the estimate is the
 * soonest a live lease should end by that mean, at least 1 s and at most its expiry.
 *
 * **Pro:** protects an origin by what it can run at once, whatever the request rate.
 * **Con:** needs a release per request; a lease shorter than the slowest response frees a slot early.
 */
import type { Decision } from '../types'
import type { Algorithm, ConcurrencyPolicy } from './types'

/** The leases held: id and expiry (Unix ms), oldest first. */
export interface ConcurrencyState {
  leases: [id: string, expiresAtMs: number][]
  /** The next lease's sequence number. */
  next: number
  /** Mean time released slots were held (ms, exponentially weighted), once one was. */
  holdMs?: number
  /** When `holdMs` last changed (Unix ms): it is kept one lease past the last release. */
  holdAtMs?: number
}

/** Weight of the newest hold time in the running mean. */
const HOLD_WEIGHT = 0.25

/** The shortest `retryAfterMs` of a denial: Retry-After is in whole seconds anyway. */
const MIN_RETRY_MS = 1_000

/** The concurrency limit; a request (cost > 0) takes one slot, cost 0 only looks. */
export const concurrency: Algorithm<ConcurrencyPolicy, ConcurrencyState> = {
  charge(state, policy, nowMs, cost) {
    const live = (state?.leases ?? []).filter(([, expiresAtMs]) => expiresAtMs > nowMs)
    const allowed = cost === 0 || live.length < policy.limit
    const taking = allowed && cost > 0
    const id = `${nowMs.toString(36)}-${state?.next ?? 0}`
    const leases: [string, number][] = taking ? [...live, [id, nowMs + policy.periodMs]] : live
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - leases.length),
      resetAtMs: leases.length > 0 ? Math.max(...leases.map(([, e]) => e)) : nowMs,
      retryAfterMs: allowed ? 0 : estimateFreeInMs(live, state?.holdMs, policy, nowMs),
    }
    if (taking) decision.leaseId = id
    return {
      state: taking ? { ...state, leases, next: (state?.next ?? 0) + 1 } : state,
      decision,
    }
  },

  expiresAtMs(state, policy) {
    const hold = state.holdAtMs === undefined ? 0 : state.holdAtMs + policy.periodMs
    return Math.max(hold, ...state.leases.map(([, expiresAtMs]) => expiresAtMs))
  },
}

/**
 * When a denied request may expect a slot (ms from `nowMs`). A lease of age `a` is expected to
 * end at `holdMs - a` while younger than the mean hold; once older (or with no release seen
 * yet), it is expected to last about as long again as it has (`a`: long holds tend to go on).
 * The soonest of these, at least {@link MIN_RETRY_MS}, and never past the first lease expiry,
 * when a slot is certain to free.
 */
function estimateFreeInMs(
  live: readonly [string, number][],
  holdMs: number | undefined,
  policy: ConcurrencyPolicy,
  nowMs: number
): number {
  if (live.length === 0) return 1
  const certainMs = Math.min(...live.map(([, e]) => e)) - nowMs
  const expectedMs = Math.min(
    ...live.map(([, expiresAtMs]) => {
      const age = nowMs - (expiresAtMs - policy.periodMs)
      return holdMs !== undefined && age < holdMs ? holdMs - age : age
    })
  )
  return Math.max(1, Math.min(certainMs, Math.max(MIN_RETRY_MS, expectedMs)))
}

/**
 * The earliest time a held slot is certain to free (its lease runs out), if any is held.
 *
 * @param state - the leases
 * @param nowMs - the current time
 */
export function nextLeaseExpiryMs(
  state: ConcurrencyState | undefined,
  nowMs: number
): number | undefined {
  const live = (state?.leases ?? []).filter(([, expiresAtMs]) => expiresAtMs > nowMs)
  return live.length > 0 ? Math.min(...live.map(([, e]) => e)) : undefined
}

/**
 * The state without one lease (released when the origin's response ended or failed), with the
 * time it was held added to the running mean.
 *
 * @param state - the leases
 * @param leaseId - the lease to drop
 * @param policy - the policy the lease was taken under (its `periodMs` dates the lease)
 * @param nowMs - the current time
 */
export function releaseLease(
  state: ConcurrencyState,
  leaseId: string,
  policy: ConcurrencyPolicy,
  nowMs: number
): ConcurrencyState {
  const lease = state.leases.find(([id]) => id === leaseId)
  if (!lease) return state
  const heldMs = Math.min(policy.periodMs, Math.max(0, nowMs - (lease[1] - policy.periodMs)))
  const holdMs =
    state.holdMs === undefined ? heldMs : state.holdMs + HOLD_WEIGHT * (heldMs - state.holdMs)
  return {
    ...state,
    leases: state.leases.filter(([id]) => id !== leaseId),
    holdMs,
    holdAtMs: nowMs,
  }
}
