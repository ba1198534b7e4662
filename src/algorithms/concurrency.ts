/**
 * @module algorithms/concurrency
 * Concurrency limit: at most `limit` requests per key in flight at the origin. Each admitted
 * request holds a lease on a slot until it is released, or until the lease runs out, so a slot
 * held by a Worker that died frees itself and no key is ever stuck. (Waiting in the queue for a
 * slot happens in the Durable Object; this module only decides and keeps the leases.)
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
}

/** The concurrency limit; a request (cost > 0) takes one slot, cost 0 only looks. */
export const concurrency: Algorithm<ConcurrencyPolicy, ConcurrencyState> = {
  consume(state, policy, nowMs, cost) {
    const live = (state?.leases ?? []).filter(([, expiresAtMs]) => expiresAtMs > nowMs)
    const allowed = cost === 0 || live.length < policy.limit
    const taking = allowed && cost > 0
    const id = `${nowMs.toString(36)}-${state?.next ?? 0}`
    const leases: [string, number][] = taking ? [...live, [id, nowMs + policy.periodMs]] : live
    const firstFree = live.length > 0 ? Math.min(...live.map(([, e]) => e)) : nowMs
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - leases.length),
      resetAtMs: leases.length > 0 ? Math.max(...leases.map(([, e]) => e)) : nowMs,
      retryAfterMs: allowed ? 0 : Math.max(1, firstFree - nowMs),
    }
    if (taking) decision.leaseId = id
    return { state: taking ? { leases, next: (state?.next ?? 0) + 1 } : state, decision }
  },

  expiresAtMs(state) {
    return Math.max(0, ...state.leases.map(([, expiresAtMs]) => expiresAtMs))
  },
}

/**
 * The state without one lease (released when the origin's response ended or failed).
 *
 * @param state - the leases
 * @param leaseId - the lease to drop
 */
export function releaseLease(state: ConcurrencyState, leaseId: string): ConcurrencyState {
  return { ...state, leases: state.leases.filter(([id]) => id !== leaseId) }
}
