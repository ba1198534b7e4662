/**
 * @module limiter/reservation
 * What passes between a lessee and its lessor (leased quotas): the ask and the answer, the same
 * at every tier (an isolate and its location's object, a location's object and the key's root
 * object). Types only.
 */
import type { ReserveAsk } from '../algorithms/reserve'
import type { Decision } from '../types'

export type { ReserveAsk } from '../algorithms/reserve'

/** What a lessee sends: its ask, and who it is (its lessor paces its lessees by how many). */
export interface LesseeAsk extends ReserveAsk {
  /** The lessee's id: an isolate's, or a location object's name. */
  lessee: string
}

/** Units granted for the next window, spendable once it begins. */
export interface AheadReservation {
  granted: number
  validFromMs: number
  validUntilMs: number
  /** The root's state they were charged in. */
  epoch: string
}

/** A lessor's answer. */
export interface Reservation {
  /** Units granted now; 0 when denied (or when there were none to hand out). */
  granted: number
  /** The decision after the grant, or the denial with its retry time. */
  decision: Decision
  /** When the root object charged the units (its clock, Unix ms). */
  chargedAtMs: number
  /** When they must be spent by (Unix ms). */
  validUntilMs: number
  /** The root's state they were charged in: a refund into another (after a reset) is ignored. */
  epoch: string
  /** Units charged ahead for the next window, if asked for and granted. */
  next?: AheadReservation
  /** How long the lessee's units should last before it asks again (ms): the lessor's pacing. */
  horizonMs: number
  /** The key has less room than was asked for: ask again no sooner than `horizonMs`. */
  scarce: boolean
}
