/**
 * @module limiter/reservation
 * What passes between a lessee and its lessor (leased quotas): the ask and the answer, the same
 * at every tier (an isolate and its location's object, a location's object and the key's root
 * object). Types only.
 */
import type { LeasablePolicy, ReserveAsk } from '../../algorithms/reserve'
import type { LotSpan } from '../../algorithms/types'
import type { Decision, Placement } from '../../types'
import type { Region } from '../calls/region'

export type { ReserveAsk } from '../../algorithms/reserve'

/** The key a lease is for, and where its root object is. */
export interface LeaseKey {
  ruleId: string
  /** Where the rule's objects live, if it says. */
  placement?: Placement | undefined
  key: string
}

/**
 * Units held, all charged in one state (epoch) and spendable from `validFromMs` (a later
 * window's start, for units charged ahead) until `validUntilMs`.
 */
export interface Lot {
  units: number
  chargedAtMs: number
  validFromMs: number
  validUntilMs: number
  epoch: string
}

/** A lessee's ask, and the units it hands back with it. */
export interface LeaseAsk extends ReserveAsk {
  /**
   * Units of a sliding window that lapsed unspent at its end, handed back with the ask rather
   * than in a call of their own: every lessee finds its units lapsed at once.
   */
  returned?: Lot[]
  /**
   * Units of a bucket's lots spent since the last ask (by this lessee, or its lessees as they
   * reported): they leave the root's hold, which would keep the bucket short of its burst
   * until it lapsed.
   */
  spent?: Lot[]
  /**
   * The lessee's demand lately (units per ms; requests denied included), once measured: a
   * lessor that is itself a lessee asks its own lessor for the sum of its lessees'.
   */
  ratePerMs?: number
  /**
   * The lessee is in its first moments: a new isolate ({@link STARTING_MS}), as every isolate
   * is just after a deploy; or a location's object that opened for a deploy, in the second
   * after (`location-lessor.ts`).
   */
  starting?: true
}

/** What a lessee sends: its ask, and who it is (its lessor paces its lessees by how many). */
export interface LesseeAsk extends LeaseAsk {
  /** The lessee's id: an isolate's, or a location object's name. */
  lessee: string
  /**
   * How long the lessee waits for the answer (ms): a lessor that must ask its own lessor first
   * waits less, so the lessee hears why rather than timing out.
   */
  budgetMs?: number
  /** An isolate's region (`regionOf` in `region.ts`), which a key's object in its location leases through. */
  region?: Region
}

/** How long a lessee counts as just started (ms). */
export const STARTING_MS = 1_000

/** Units granted for a later time (the next window, or later in this one), spendable from it. */
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
  /**
   * When they may be spent from (the root's clock): later than their charge for units a
   * location's object passes on that were charged for later in their window. `chargedAtMs`
   * when absent.
   */
  validFromMs?: number
  /** When they must be spent by (the root's clock, Unix ms). */
  validUntilMs: number
  /**
   * The root's clock when the lessor answered, as it knows it: earliest and latest (infinite
   * when it does not know yet). Absent from the root itself, whose clock it is (`chargedAtMs`).
   * A lessee bounds its own clock's offset from the root's by it (`lease-clock.ts`).
   */
  rootNowMs?: [number, number]
  /** The root's state they were charged in: a refund into another (after a reset) is ignored. */
  epoch: string
  /** Units charged ahead for the next window, if asked for and granted. */
  next?: AheadReservation
  /** Units charged on the next window's ramp (spendable from a little after it begins). */
  ramp?: AheadReservation[]
  /** Units charged for later in this window while the key is short (spendable each from its time). */
  later?: AheadReservation[]
  /** How long the lessee's units should last before it asks again (ms): the lessor's pacing. */
  horizonMs: number
  /** The key has less room than was asked for: ask again no sooner than `horizonMs`. */
  scarce: boolean
  /**
   * From a lessor that is itself a lessee (a location's object): when it asks its own lessor
   * again, so expects units again (ms from now). A scarce answer's lessee asks again then, not a
   * horizon later.
   */
  refillInMs?: number
  /**
   * From a location's object: the key's root said it is short of room in this window. An
   * isolate that runs out then denies at once while it refills, rather than waiting: demand
   * exceeds the room, and the units it would wait for serve the requests after it.
   */
  rootShort?: boolean
  /**
   * From a location's object that opens later (just started, after a deploy): nothing granted;
   * ask again this long from now (ms), for every request waiting by then. An isolate that just
   * started has measured no demand when it first asks, so that ask alone would size the
   * object's first call to the root at a request or so.
   */
  opensInMs?: number
}

/**
 * What a lessor answers over RPC: the key's root object (`reserve`, `refund`) and a key's object
 * in one location (`sublease`, `subrefund`). `RateLimiterObject` implements it; its callers reach
 * it through {@link LessorStub}.
 */
export interface Lessor {
  /** As the key's root object: charges units for a lessee (a location's object). */
  reserve(policy: LeasablePolicy, ask: LesseeAsk): Reservation
  /** As the key's root object: takes back units a lessee did not spend. */
  refund(policy: LeasablePolicy, units: number, lot: LotSpan, epoch: string): void
  /** As a key's object in one location: grants an isolate of the location units. */
  sublease(lease: LeaseKey, policy: LeasablePolicy, ask: LesseeAsk): Promise<Reservation>
  /** As a key's object in one location: takes back units an isolate did not spend. */
  subrefund(lease: LeaseKey, policy: LeasablePolicy, lot: Lot): void
  /** As a key's object in one location: drops what it holds of a key that was reset. */
  subforget(lease: LeaseKey): void
}

/** A {@link Lessor} as a stub calls it: every answer a promise. */
export type LessorStub = {
  [M in keyof Lessor]: (...args: Parameters<Lessor[M]>) => Promise<Awaited<ReturnType<Lessor[M]>>>
}
