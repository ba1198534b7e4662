/**
 * @module limiter/lease-take
 * How a lease book (`leases.ts`) takes a key's units for a request: from what is held when it
 * covers the request, without a call; else after the units held for soon become spendable, or
 * after a reservation from the key's lessor, whose decision a request charged in it shares;
 * denied for now while the lessor's word that the key is scarce or short holds.
 */
import type { LeasablePolicy } from '../../algorithms/reserve'
import type { Decision } from '../../types'
import { allowedFrom, sameSpan, soonDueMs, takeUnits } from './key-lease'
import type { LeaseKey, Lot } from './key-lease'
import type { HandBack } from './hand-back'
import type { Upstream } from './lease-calls'
import type { BookLease, BookParts, LeaseRefill } from './lease-refill'
import { shareOfHeld } from './lease-sizing'
import type { LeaseTable } from './lease-table'
import { quietDecision, snapshotOf, spreadWindowStart, type Pacing } from './lessor-word'
import type { Reservation } from './reservation'
import { delay, withTimeout } from '../calls/rpc'

/** The least a lessee waits before asking an overloaded lessor again (ms). */
const OVERLOAD_QUIET_MS = 500

/** A key and the limit its units are counted under. */
export interface LeaseRef extends LeaseKey {
  policy: LeasablePolicy
  /** For a lessor that is itself a lessee: the demand its lessees report (units per ms). */
  ratePerMs?: number | undefined
}

/**
 * What a take gave: units (with the span they may be spent in), or none and the decision; and
 * when the root took it, for a request decided by the units charged for it while it waited.
 */
export type Take =
  | { granted: number; lot: Lot; decision: Decision; waited: boolean; decidedAtMs?: number }
  | { granted: 0; lot?: undefined; decision: Decision; waited: boolean; decidedAtMs?: undefined }

/** A book's takes of its keys' units. */
export class LeaseTaker {
  readonly #now: () => number
  readonly #leases: LeaseTable<BookLease, Upstream>
  readonly #handBack: HandBack
  readonly #pacing: Pacing
  readonly #refill: LeaseRefill
  readonly #sweep: (nowMs: number) => void

  /**
   * @param parts - the book's clock, keys, hand-backs and pacing
   * @param refill - the book's refills
   * @param sweep - hands back the units of the book's quiet keys (at most once per quiet time)
   */
  constructor(parts: BookParts, refill: LeaseRefill, sweep: (nowMs: number) => void) {
    this.#now = parts.now
    this.#leases = parts.leases
    this.#handBack = parts.handBack
    this.#pacing = parts.pacing
    this.#refill = refill
    this.#sweep = sweep
  }

  /**
   * Takes between `min` and `max` units of a key: see `LeaseBook.take`.
   *
   * @param to - the key's lessor
   * @param ref - the key and its policy
   * @param min - the least of use (a request's cost), or 0
   * @param max - the most wanted
   * @param deadlineMs - past it, a request still without units is denied for now
   * @param sendAtMs - a reservation this take starts is sent no sooner
   * @throws {LimiterUnavailableError} when no reservation could be had
   */
  async take(
    to: Upstream,
    ref: LeaseRef,
    min: number,
    max: number,
    deadlineMs: number,
    sendAtMs: number
  ): Promise<Take> {
    const sinceMs = this.#now()
    this.#sweep(sinceMs)
    let waited = false
    let sendAt = sendAtMs
    let toldWhenOpen = false
    let first: BookLease | undefined
    for (;;) {
      const nowMs = this.#now()
      // A lessee running one version at a time replaced this policy's lease while the request
      // waited (an edit reached it): the request, of the version before, is denied for now.
      // Touched again, the lease would replace the new version's, whose next request replaces
      // it back: a lease made and handed back each round trip while the request lasts.
      if (first && this.#leases.get(ref) !== first)
        return { granted: 0, decision: quietDecision(first, nowMs), waited }
      const lease = this.touch(to, ref, nowMs)
      first ??= lease
      const now = this.takeNow(lease, min, max, nowMs)
      if (now) return waited ? { ...now, waited } : now
      // Units held that this clock may spend once it is surely in their span: wait for them,
      // if they cover this request after those already waiting.
      const dueMs = min > 0 ? soonDueMs(lease, nowMs, min + lease.waiting) : undefined
      if (dueMs !== undefined && dueMs < deadlineMs) {
        waited = true
        lease.waiting += min
        await delay(dueMs - nowMs)
        lease.waiting -= min
        continue
      }
      const held = this.#refill.held(lease, nowMs)
      const stale = lease.pending && nowMs - lease.pending.sinceMs > 2 * to.timeoutMs
      // A short key: what other lessees lack, this one would wait for. Denied now, the request
      // costs no wait, and the refill serves the requests after it (demand exceeds the room).
      // Its lessor short itself gives what it holds; short only upstream, it fetches the need.
      const shortHere = lease.shortWaitMs !== undefined
      if ((shortHere || nowMs < (lease.rootShortUntilMs ?? 0)) && !waited && min > 0) {
        if (!lease.pending || stale)
          this.#handBack.run(
            this.#refill.reserve(lease, nowMs, max - held.now, shortHere ? 0 : min).promise
          )
        lease.demandSinceReserve += max
        return { granted: 0, decision: quietDecision(lease, nowMs), waited }
      }
      const pending =
        lease.pending && !stale
          ? lease.pending
          : // What the caller wants, not only what it needs: a location's object asking the
            // root for an isolate fetches that isolate's batch in the same round trip.
            this.#refill.reserve(
              lease,
              nowMs,
              max - held.now + lease.waiting + lease.waitingExtra,
              min - held.now,
              sendAt
            )
      waited = true
      lease.waiting += min
      lease.waitingExtra += max - min
      const outcome = await settledBy(pending.promise, deadlineMs - nowMs)
      lease.waiting -= min
      lease.waitingExtra -= max - min
      if (outcome === undefined) {
        lease.demandSinceReserve += max
        return { granted: 0, decision: quietDecision(lease, this.#now()), waited }
      }
      if (!outcome.ok) {
        if (outcome.error.reason !== 'overloaded') throw outcome.error
        // Overloaded even after waits: the key's units cannot be had for now. That is a
        // decision, not a failure: deny until a horizon has passed (never fail open on load).
        const nowMs = this.#now()
        lease.quietUntilMs = nowMs + Math.max(lease.horizonMs, OVERLOAD_QUIET_MS)
        lease.demandSinceReserve += max
        return { granted: 0, decision: quietDecision(lease, nowMs), waited }
      }
      const { granted, decision, opensInMs } = outcome.reservation
      const own =
        min > 0
          ? this.#takeOwn(lease, outcome.reservation, sinceMs <= pending.sinceMs, sinceMs, min, max)
          : undefined
      if (own) return own
      // Its lessor opens later (a deploy): asked again then, for what is waiting by then.
      if (granted === 0 && opensInMs !== undefined && !toldWhenOpen) {
        toldWhenOpen = true
        sendAt = this.#now() + opensInMs
        continue
      }
      // Denied for a cost no greater than this one: so is this request.
      if (granted === 0 && pending.minUnits > 0 && pending.minUnits <= min) {
        lease.demandSinceReserve += max
        return { granted: 0, decision, waited }
      }
      if (granted === 0 && outcome.reservation.scarce && pending.minUnits === 0) {
        lease.demandSinceReserve += max
        return { granted: 0, decision: quietDecision(lease, this.#now()), waited }
      }
    }
  }

  /**
   * A request that waited for a reservation charged after it came is decided as its lessor
   * decided (at the root, when it charged the units, as an exact-mode object decides): it takes
   * its units from that grant, and the lessor's decision is its own. So units that land after
   * their window ended still serve it (the root counted them in that window); what such a grant
   * holds beyond the request's cost lapses, and goes back.
   */
  #takeOwn(
    lease: BookLease,
    reservation: Reservation,
    beforeAsk: boolean,
    sinceMs: number,
    min: number,
    max: number
  ): Take | undefined {
    const { chargedAtMs, validUntilMs, epoch } = reservation
    // Only if it came before the charge: before the ask was made, or, joining the ask in
    // flight, by the root's clock whatever this one's offset from it.
    if (!beforeAsk && sinceMs + (lease.clock?.highMs ?? 0) > chargedAtMs) return undefined
    const validFromMs = reservation.validFromMs ?? chargedAtMs
    if (validFromMs !== chargedAtMs) return undefined
    const lot = sameSpan(lease.lots, { epoch, validFromMs, validUntilMs })
    if (!lot || lot.units < min) return undefined
    const nowMs = this.#now()
    const units =
      lot.hereUntilMs > nowMs
        ? shareOfHeld(lot.units, min, max, lease.waiting + lease.waitingExtra)
        : min
    lot.units -= units
    lease.demandSinceReserve += max
    const held = this.#refill.held(lease, nowMs)
    return {
      granted: units,
      lot: { units, chargedAtMs, validFromMs, validUntilMs, epoch },
      decision: allowedFrom(reservation.decision, held.now),
      waited: true,
      decidedAtMs: chargedAtMs,
    }
  }

  /**
   * What a take gives without awaiting anything: units when what is held covers `min`, a
   * denial while the lessor's word that the key is scarce holds; `undefined` when a
   * reservation must be awaited.
   *
   * @param lease - the key's lease
   * @param min - the least of use, or 0
   * @param max - the most wanted
   * @param nowMs - the time
   */
  takeNow(lease: BookLease, min: number, max: number, nowMs: number): Take | undefined {
    const held = this.#refill.held(lease, nowMs)
    if (held.now < min && this.#pacing.scarceForWindow)
      spreadWindowStart(lease, nowMs, this.#pacing.spread)
    if (held.now >= min) {
      const units = shareOfHeld(held.now, min, max, lease.waiting + lease.waitingExtra)
      lease.demandSinceReserve += max
      // Taken before a refill is planned: a refill may hand back what is held beyond need.
      const lot = units > 0 ? takeUnits(lease, units, nowMs) : undefined
      const heldBefore = held.now
      held.now -= units
      this.#refill.refillAhead(lease, nowMs, held)
      if (!lot?.units) return { granted: 0, decision: snapshotOf(lease, nowMs), waited: false }
      const decision = allowedFrom(snapshotOf(lease, nowMs), heldBefore - lot.units)
      return { granted: lot.units, lot, decision, waited: false, decidedAtMs: undefined }
    }
    // The lessor said the key is scarce: no more asks until its horizon has passed. Units held
    // here that start within this clock's uncertainty are waited for instead (`take`).
    if (
      !lease.pending &&
      nowMs < lease.quietUntilMs &&
      soonDueMs(lease, nowMs, min) === undefined
    ) {
      lease.demandSinceReserve += max
      return { granted: 0, decision: quietDecision(lease, nowMs), waited: false }
    }
    return undefined
  }

  /**
   * The key's lease under its policy, made if there is none; marked most recently used.
   *
   * @param to - the key's lessor
   * @param ref - the key and its policy
   * @param nowMs - the time
   */
  touch(to: Upstream, ref: LeaseRef, nowMs: number): BookLease {
    const lease = this.#leases.touch(ref, nowMs, to)
    lease.to = to
    if (lease.reportedRate !== ref.ratePerMs) {
      lease.reportedRate = ref.ratePerMs
      lease.plan = undefined
    }
    return lease
  }
}

/** What a promise settles to within `ms`, or `undefined` if it takes longer. */
function settledBy<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  if (ms === Number.POSITIVE_INFINITY) return promise
  return withTimeout(promise, Math.max(0, ms)).catch(() => undefined)
}
