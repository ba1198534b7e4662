/**
 * @module limiter/key-lease
 * What a lease book (`leases.ts`) keeps per key, and the bookkeeping on it that needs no call:
 * its lots (units granted, each spendable in a span of time), the observed demand, the decision
 * a local spend reports.
 */
import { isWindowed, windowOf, type LeasablePolicy } from '../../algorithms/reserve'
import type { LimiterUnavailableError } from '../../errors'
import type { Decision } from '../../types'
import { spanHere, windowEndHere, type ClockOffset } from './lease-clock'
import type { AheadReservation, LeaseKey, Lot, Reservation } from './reservation'

export type { LeaseKey, Lot } from './reservation'

/**
 * Units held: their span in the root's time (what they are handed on and back with), and when
 * they may be spent by this lessee's clock (`lease-clock.ts`).
 */
export interface HeldLot extends Lot {
  hereFromMs: number
  hereUntilMs: number
}

/** A reservation's result as the requests waiting for it see it. */
export type Outcome =
  { ok: true; reservation: Reservation } | { ok: false; error: LimiterUnavailableError }

/** A reservation in flight. */
export interface Pending {
  promise: Promise<Outcome>
  sinceMs: number
  /** The least it grants, or none (0: a refill ahead of need, which never denies). */
  minUnits: number
}

/**
 * What a book knows of one key. Every field is set when the lease is made (the optional ones to
 * `undefined`) and cleared by assigning `undefined`, never `delete`: a lease read on every
 * request keeps one shape, so property reads stay fast.
 */
export interface KeyLease extends LeaseKey {
  policy: LeasablePolicy
  /** Units held, the soonest to lapse first. */
  lots: HeldLot[]
  /** How far this clock is from the key's root's, as its lessor's last answer bounds it. */
  clock?: ClockOffset | undefined
  /** The lessor's last answer, for the headers of local decisions. */
  snapshot?: Decision | undefined
  /** Units demanded per ms here lately, once measured. */
  rate?: number | undefined
  /** How much of the mean `rate` is measured rather than not yet seen, in `(0, 1]`; set with it. */
  rateWeight?: number | undefined
  /** Before that, a guess that can only be low (see `measureRate`). */
  provisionalRate?: number | undefined
  /**
   * For a lessor that is itself a lessee (a location's object): the demand its lessees report,
   * which sizes its asks in place of `rate` (the sum of their asks, which run ahead of use).
   */
  reportedRate?: number | undefined
  /** Units demanded (spent, or asked for and refused) since the last measure. */
  demandSinceReserve: number
  /** When demand was last measured. */
  lastReserveMs?: number | undefined
  /** How long a batch should last, as the lessor said. */
  horizonMs: number
  /** The last round trip to the lessor (ms). */
  roundTripMs: number
  /** Asked for more than the lessor had: ask again no sooner than this. */
  quietUntilMs: number
  /** Until when the key counts as scarce (its lessor said so in this window). */
  scarceUntilMs: number
  /**
   * Set when the lessor's last answer said the key is short: how long it said to wait before
   * asking again (ms). Meanwhile a request that finds no units is denied at once while a refill
   * travels, rather than waiting for it.
   */
  shortWaitMs?: number | undefined
  /** Until when the key's root is short, as a location's object said (see `rootShort`). */
  rootShortUntilMs?: number | undefined
  /** Asked for the next window's units and given none: no more asks ahead until this. */
  aheadRefusedUntilMs: number
  lastUsedMs: number
  /** Units of requests waiting for a reservation. */
  waiting: number
  pending?: Pending | undefined
  /**
   * Units of a sliding window's lots that lapsed unspent at its end, to hand back: the window
   * just ended still weighs on the estimate, so they are room again at the key's root object.
   */
  lapsed?: Lot[] | undefined
  /** Units of a bucket's lots spent here or reported spent by lessees, to report with the next ask. */
  spent?: Lot[] | undefined
}

/**
 * A key's lease before its first reservation: nothing held, nothing measured, the default
 * horizon. Every field is present, so that each lease has the shape the request path reads.
 *
 * @param ref - the key and its policy
 * @param horizonMs - the horizon assumed until the lessor tells one
 * @param nowMs - the time of its first use
 */
export function newKeyLease(
  ref: LeaseKey & { policy: LeasablePolicy },
  horizonMs: number,
  nowMs: number
): KeyLease {
  return {
    ruleId: ref.ruleId,
    placement: ref.placement,
    key: ref.key,
    policy: ref.policy,
    lots: [],
    clock: undefined,
    snapshot: undefined,
    rate: undefined,
    rateWeight: undefined,
    provisionalRate: undefined,
    reportedRate: undefined,
    demandSinceReserve: 0,
    lastReserveMs: undefined,
    horizonMs,
    roundTripMs: 0,
    quietUntilMs: 0,
    scarceUntilMs: 0,
    shortWaitMs: undefined,
    rootShortUntilMs: undefined,
    aheadRefusedUntilMs: 0,
    lastUsedMs: nowMs,
    waiting: 0,
    pending: undefined,
    lapsed: undefined,
    spent: undefined,
  }
}

/**
 * How long until units of a key are expected (ms): the answer to the reservation in flight, or
 * to the next one once the lessor's wait is over, a round trip each, or units held for later
 * becoming spendable, whichever comes first; 0 when the lessee may ask now and has nothing in
 * flight.
 *
 * @param lease - the key's lease
 * @param nowMs - the lessee's clock
 */
export function unitsDueInMs(lease: KeyLease, nowMs: number): number {
  const askedMs = lease.pending
    ? lease.pending.sinceMs + lease.roundTripMs
    : nowMs < lease.quietUntilMs
      ? lease.quietUntilMs + lease.roundTripMs
      : nowMs
  // Units held for later (a window's ramp) come in at their own time, without an ask.
  let dueMs = askedMs
  for (const lot of lease.lots)
    if (lot.units > 0 && lot.hereFromMs > nowMs) dueMs = Math.min(dueMs, lot.hereFromMs)
  return Math.max(0, dueMs - nowMs)
}

/** Demand is averaged over about this long (ms): a burst of waiting requests is not a rate. */
const RATE_TIME_CONSTANT_MS = 1_000

/** Demand is measured over at least this long (ms). */
const MIN_MEASURE_MS = 50

/**
 * Updates the key's demand per ms from what was demanded since the last measure, as a new
 * reservation starts: a mean that weighs the last {@link RATE_TIME_CONSTANT_MS} most.
 *
 * A request counts where it came: the requests still waiting for a reservation (counted when
 * they are decided) count in this measure, and are taken off the next. Counted when decided,
 * the requests that came behind a cold start's first call, all still waiting when it lands,
 * read as no demand at all, and the mean would start near 0 and take seconds to climb.
 *
 * A reservation a request waits for opens the next measure with that request, which is then
 * not counted in it: n requests over the time from the first to the last are n − 1 intervals
 * ((n − 1)/T is the rate's unbiased estimate; 1/T from one interval is not, and reads a lessee
 * seeing a request every few seconds, two of them close, as a busy one).
 *
 * @param lease - the key's lease
 * @param nowMs - the book's clock
 * @param opening - units of the request this reservation is for, if one waits for it
 */
export function measureRate(lease: KeyLease, nowMs: number, opening = 0): void {
  const lastMs = lease.lastReserveMs
  if (lastMs === undefined) {
    lease.demandSinceReserve = -opening - lease.waiting
    lease.lastReserveMs = nowMs
    return
  }
  const demand = Math.max(0, lease.demandSinceReserve + lease.waiting)
  const elapsedMs = nowMs - lastMs
  if (elapsedMs < MIN_MEASURE_MS) {
    // Until a first measure, a guess that can only be low: what came so far, over the least
    // time a measure takes. A cold lessee then holds a little at once instead of nothing.
    if (lease.rate === undefined) lease.provisionalRate = demand / MIN_MEASURE_MS
    return
  }
  const observed = demand / elapsedMs
  // A mean over the time measured so far until it spans the time constant, then a moving one
  // (an exponential mean from 0, scaled by the weight it has): the first short measure of a
  // cold lessee, a request or two, weighs as little as the time it covers.
  const weight = 1 - Math.exp(-elapsedMs / RATE_TIME_CONSTANT_MS)
  const had = lease.rateWeight ?? 0
  const measured = had + weight * (1 - had)
  lease.rate = ((lease.rate ?? 0) * had * (1 - weight) + weight * observed) / measured
  lease.rateWeight = measured
  lease.demandSinceReserve = -opening - lease.waiting
  lease.lastReserveMs = nowMs
}

/** Units a key holds: spendable now, later in the current window, and in a later window. */
export interface Held {
  now: number
  soon: number
  later: number
  /**
   * Of those spendable now, the units whose lease ends within the time asked for, before the
   * window does (a window's units lease for 10 s at most): gone before the next ask.
   */
  ending: number
}

/** A lot spendable within this much past a clock's uncertainty is waited for (ms). */
const SOON_SLACK_MS = 10

/**
 * When units held here that are not spendable yet will cover `min`, if that is only the
 * clock's uncertainty away: units of a window that has begun by the root's clock, or is about
 * to, which this lessee may spend once its clock is surely past the start. Requests wait for
 * them rather than be denied or ask for more (at every window's start, at every lessee).
 *
 * @param lease - the key's lease
 * @param nowMs - the book's clock
 * @param min - the units needed
 * @returns this clock's time they are spendable at, or `undefined`
 */
export function soonDueMs(lease: KeyLease, nowMs: number, min: number): number | undefined {
  const clock = lease.clock
  const reachMs = nowMs + (clock ? clock.highMs - clock.lowMs : 0) + SOON_SLACK_MS
  let units = 0
  let dueMs = nowMs
  // Lots are kept in the order they lapse; those starting soon are few.
  for (const lot of lease.lots) {
    if (lot.units <= 0 || lot.hereUntilMs <= reachMs || lot.hereFromMs > reachMs) continue
    units += lot.units
    dueMs = Math.max(dueMs, lot.hereFromMs)
  }
  return units >= min && dueMs > nowMs ? dueMs : undefined
}

/**
 * Drops the lots that lapsed (a sliding window's unspent units go to {@link KeyLease.lapsed}),
 * and returns the units spendable now, later in this window, and in a later window.
 *
 * @param lease - the key's lease
 * @param nowMs - the book's clock
 * @param endingMs - units whose lease ends sooner than this (ms), before the window's end, count
 *   as `ending` too
 */
export function heldNow(lease: KeyLease, nowMs: number, endingMs = 0): Held {
  let now = 0
  let soon = 0
  let later = 0
  let ending = 0
  let spent = false
  const windowed = isWindowed(lease.policy)
  const endMs = windowed
    ? windowEndHere(lease.policy, lease.clock, nowMs)
    : Number.POSITIVE_INFINITY
  const endingBeforeMs = windowed ? Math.min(nowMs + endingMs, endMs) : 0
  for (const lot of lease.lots) {
    if (lot.hereUntilMs <= nowMs || lot.units <= 0) spent = true
    else if (lot.hereFromMs <= nowMs) {
      now += lot.units
      if (lot.hereUntilMs < endingBeforeMs) ending += lot.units
    } else if (lot.hereFromMs < endMs) soon += lot.units
    else later += lot.units
  }
  if (spent) dropSpent(lease, nowMs)
  return { now, soon, later, ending }
}

function dropSpent(lease: KeyLease, nowMs: number): void {
  const kept: HeldLot[] = []
  for (const lot of lease.lots) {
    if (lot.units <= 0) continue
    if (lot.hereUntilMs > nowMs) kept.push(lot)
    else if (lease.policy.algorithm === 'sliding-window') addLapsed(lease, rootLot(lot))
  }
  lease.lots = kept
}

/** A held lot as it is handed on or back: its span in the root's time alone. */
function rootLot(lot: Lot): Lot {
  const { units, chargedAtMs, validFromMs, validUntilMs, epoch } = lot
  return { units, chargedAtMs, validFromMs, validUntilMs, epoch }
}

/**
 * Keeps units that lapsed unspent to hand back, joined to those of the same span and epoch.
 *
 * @param lease - the key's lease
 * @param lot - the lapsed units
 */
export function addLapsed(lease: KeyLease, lot: Lot): void {
  const lapsed = (lease.lapsed ??= [])
  // Handed back to the window they were charged in, whatever their start in it: one lot per
  // window and end (a window's ramp lapses as one).
  const windowMs = windowOf(lease.policy, lot.validFromMs)
  const same = lapsed.find(
    (held) => sameHold(held, lot) && windowOf(lease.policy, held.validFromMs) === windowMs
  )
  if (!joinedTo(same, lot)) lapsed.push({ ...lot })
}

/** Spent lots of distinct holds kept for one report; more lapse unreported (their hold ends). */
const MAX_SPENT_LOTS = 32

/**
 * Keeps a bucket's units spent, to report with the next ask, joined to those of the same hold
 * (epoch and end). Windowed algorithms count a spend when it is charged: nothing to report.
 *
 * @param lease - the key's lease
 * @param lot - the units spent and the hold they came from
 */
export function addSpent(lease: KeyLease, lot: Lot): void {
  if (lot.units <= 0 || isWindowed(lease.policy)) return
  const spent = (lease.spent ??= [])
  const same = spent.find((held) => sameHold(held, lot))
  if (!joinedTo(same, lot) && spent.length < MAX_SPENT_LOTS) spent.push({ ...lot })
}

/** Whether two lots were charged in one epoch and lapse together. */
function sameHold(a: Lot, b: Lot): boolean {
  return a.epoch === b.epoch && a.validUntilMs === b.validUntilMs
}

/** Adds `lot`'s units to `same`, the lot it joins, if there is one; whether there was. */
function joinedTo(same: Lot | undefined, lot: Lot): boolean {
  if (same) same.units += lot.units
  return same !== undefined
}

/**
 * The lot of `lots` charged in the same epoch for the same span as `span`, if any (lots of one
 * span and epoch are kept joined: see {@link addLot}).
 *
 * @param lots - a lease's lots
 * @param span - the span and epoch to find
 */
export function sameSpan<L extends Lot>(
  lots: readonly L[],
  span: Pick<Lot, 'epoch' | 'validFromMs' | 'validUntilMs'>
): L | undefined {
  return lots.find(
    (held) =>
      held.epoch === span.epoch &&
      held.validFromMs === span.validFromMs &&
      held.validUntilMs === span.validUntilMs
  )
}

/**
 * Takes `units` spendable now from the lots, the soonest to lapse first (the caller checked
 * that they are there; never more than there are). Returns the units taken and the span they
 * may be spent in: the narrowest of the lots they came from, so a sub-lease never outlives what
 * it was cut from.
 *
 * @param lease - the key's lease
 * @param units - units to take
 * @param nowMs - the book's clock
 */
export function takeUnits(lease: KeyLease, units: number, nowMs: number): Lot {
  let left = units
  let first: Lot | undefined
  let fromMs = Number.NEGATIVE_INFINITY
  let untilMs = Number.POSITIVE_INFINITY
  for (const lot of lease.lots) {
    if (left === 0) break
    if (lot.hereFromMs > nowMs || lot.units === 0) continue
    const taken = Math.min(left, lot.units)
    lot.units -= taken
    left -= taken
    first ??= lot
    fromMs = Math.max(fromMs, lot.validFromMs)
    untilMs = Math.min(untilMs, lot.validUntilMs)
  }
  // One object per take: this runs for every request decided in the isolate.
  return first
    ? {
        units: units - left,
        chargedAtMs: first.chargedAtMs,
        validFromMs: fromMs,
        validUntilMs: untilMs,
        epoch: first.epoch,
      }
    : ({ units: 0 } as Lot)
}

/**
 * Takes up to `units` that may be spent in the window beginning at `windowMs` (for a lessee's
 * ask ahead), all from one lot.
 *
 * @param lease - the key's lease
 * @param units - units wanted
 * @param windowMs - the window's start
 * @returns the lot given out, or `undefined` when none is held for that window
 */
export function takeAhead(lease: KeyLease, units: number, windowMs: number): Lot | undefined {
  const { periodMs } = lease.policy
  const lot = lease.lots.find(
    (held) => held.units > 0 && Math.floor(held.validFromMs / periodMs) * periodMs === windowMs
  )
  if (!lot) return undefined
  const taken = Math.min(units, lot.units)
  lot.units -= taken
  return { ...rootLot(lot), units: taken }
}

/**
 * Adds granted units as a lot: joined to a lot of the same span and epoch, else a lot of its
 * own, spendable here while its span holds by the lease's clock (`lease-clock.ts`), the lots
 * kept in the order they lapse.
 *
 * @param lease - the key's lease (its clock known: it has heard from its lessor)
 * @param lot - the granted units, their span the root's
 * @param nowMs - this clock
 */
export function addLot(lease: KeyLease, lot: Lot, nowMs: number): void {
  if (lot.units <= 0) return
  if (joinedTo(sameSpan(lease.lots, lot), lot)) return
  const here = spanHere(lease.clock ?? SAME_CLOCK, lot, nowMs)
  lease.lots.push({ ...rootLot(lot), hereFromMs: here.fromMs, hereUntilMs: here.untilMs })
  lease.lots.sort((a, b) => a.hereUntilMs - b.hereUntilMs)
}

/** The clock of a lessee that has not heard from its lessor: read as the root's. */
const SAME_CLOCK: ClockOffset = { lowMs: 0, highMs: 0 }

/**
 * The lots of a reservation: the units granted now, those charged for later in this window, and
 * those charged ahead for the next window (at its start, and on its ramp).
 *
 * @param reservation - the lessor's answer
 */
export function lotsOf(reservation: Reservation): Lot[] {
  const { granted, chargedAtMs, validUntilMs, epoch, next, ramp, later } = reservation
  const validFromMs = reservation.validFromMs ?? chargedAtMs
  const lots: Lot[] = []
  if (granted > 0) lots.push({ units: granted, chargedAtMs, validFromMs, validUntilMs, epoch })
  if (next && next.granted > 0) lots.push(aheadLot(next, chargedAtMs))
  for (const grant of [...(later ?? []), ...(ramp ?? [])])
    if (grant.granted > 0) lots.push(aheadLot(grant, chargedAtMs))
  return lots
}

function aheadLot(next: AheadReservation, chargedAtMs: number): Lot {
  const { granted, validFromMs, validUntilMs, epoch } = next
  return { units: granted, chargedAtMs, validFromMs, validUntilMs, epoch }
}

/**
 * A local decision: the lessor's last answer, with what this book still holds counted as
 * remaining (approximate: spends elsewhere since then are not seen).
 *
 * @param snapshot - the lessor's last decision for the key
 * @param held - units this book still holds after the spend
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
