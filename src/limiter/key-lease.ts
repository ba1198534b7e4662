/**
 * @module limiter/key-lease
 * What a lease book (`leases.ts`) keeps per key, and the bookkeeping on it that needs no call:
 * the observed rate, whether a grant joins the units held, the decision a local spend reports.
 */
import type { LeasablePolicy } from '../algorithms/reserve'
import type { LimiterUnavailableError } from '../errors'
import type { Decision } from '../types'
import type { LeaseCallContext } from './lease-calls'
import { worthRefunding } from './lease-sizing'
import type { Reservation } from './rate-limiter-object'

/** A reservation's result as the requests waiting for it see it. */
export type Outcome =
  { ok: true; reservation: Reservation } | { ok: false; error: LimiterUnavailableError }

/** Units held: all charged in one window (or epoch) and spendable until `validUntilMs`. */
export interface Lot {
  units: number
  chargedAtMs: number
  validUntilMs: number
  epoch: string
}

/** A reservation in flight. */
export interface Pending {
  promise: Promise<Outcome>
  sinceMs: number
  /** The least it grants, or none (0: a refill ahead of need, which never denies). */
  minUnits: number
}

/** What a book knows of one key. */
export interface KeyLease {
  ruleId: string
  key: string
  policy: LeasablePolicy
  /** Where its calls go. */
  to: LeaseCallContext
  lot?: Lot
  /** The object's last answer, for the headers of local decisions. */
  snapshot?: Decision
  /** Units spent per ms here lately, once two reservations have measured it. */
  rate?: number
  spentSinceReserve: number
  lastReserveMs?: number
  lastUsedMs: number
  /** Units of requests waiting for a reservation. */
  waiting: number
  pending?: Pending
}

/**
 * The map key of a rule's limit key.
 *
 * @param ruleId - the rule
 * @param key - the limit key
 */
export function leaseId(ruleId: string, key: string): string {
  return `${ruleId}\n${key}`
}

/**
 * Updates the key's rate from what it spent since the last reservation (a running mean over
 * reservations, the newest counting half) as a new one starts.
 *
 * @param lease - the key's lease
 * @param nowMs - the book's clock
 */
export function measureRate(lease: KeyLease, nowMs: number): void {
  const lastMs = lease.lastReserveMs
  // Within the same ms nothing can be measured: keep counting.
  if (lastMs !== undefined && nowMs <= lastMs) return
  if (lastMs !== undefined) {
    const observed = lease.spentSinceReserve / (nowMs - lastMs)
    lease.rate = lease.rate === undefined ? observed : (lease.rate + observed) / 2
  }
  lease.spentSinceReserve = 0
  lease.lastReserveMs = nowMs
}

/**
 * Whether a grant's units may join the units held: charged in the same state (epoch) and
 * window, while the held ones are still valid.
 *
 * @param lease - the key's lease
 * @param reservation - the grant
 * @param nowMs - the book's clock
 */
export function joinsLot(lease: KeyLease, reservation: Reservation, nowMs: number): boolean {
  const lot = lease.lot
  return (
    lot !== undefined &&
    lot.epoch === reservation.epoch &&
    nowMs < lot.validUntilMs &&
    worthRefunding(lease.policy, lot.chargedAtMs, reservation.chargedAtMs)
  )
}

/**
 * A local decision: the object's last answer, with what this isolate still holds counted as
 * remaining (approximate: spends in other isolates since then are not seen).
 *
 * @param snapshot - the object's last decision for the key
 * @param held - units this isolate still holds after the spend
 */
export function allowedFrom(snapshot: Decision, held: number): Decision {
  return {
    allowed: true,
    limit: snapshot.limit,
    remaining: Math.min(snapshot.limit, Math.max(0, snapshot.remaining) + held),
    resetAtMs: snapshot.resetAtMs,
    retryAfterMs: 0,
  }
}
