/**
 * @module limiter/leases
 * Leased quotas (`"consistency": "leased"`), the lessee's side. A lease book holds, per key,
 * units its lessor granted (and charged, at the key's root object, before anyone spends them),
 * and spends them without a call. It refills ahead of need in the background, asks for the
 * next window's units before the window ends, goes quiet when its lessor says the key is
 * scarce, and hands back what it will not spend.
 *
 * Two kinds of lessee keep a book: an isolate, whose lessor is its location's object; and a
 * location's object, whose lessor is the key's root object (`location-lessor.ts`). So the
 * root hears from locations, not isolates, and every lessor paces its lessees by how many it
 * has: its load stays near a target however many isolates there are.
 *
 * Admissions never exceed the limit: every unit spent was charged at the root first, and is
 * spent only in its span (its window; for buckets, while the root counts it as held). The cost
 * is early denials: units held elsewhere, at most what the lessees of a tier demand over their
 * horizon.
 */
import { isLeasable, type LeasablePolicy } from '../../algorithms/reserve'
import type { Decision } from '../../types'
import type { ChargeCall, ChargeResult } from '../calls/charge-call'
import {
  addLapsed,
  addLot,
  addSpent,
  allowedFrom,
  heldNow,
  lotsOf,
  measureRate,
  newKeyLease,
  sameSpan,
  soonDueMs,
  takeAhead,
  takeUnits,
  unitsDueInMs,
  type Held,
  type KeyLease,
  type LeaseKey,
  type Lot,
  type Outcome,
  type Pending,
} from './key-lease'
import { HandBack } from './hand-back'
import {
  failedCharge,
  keepAliveInRequest,
  locationUpstream,
  rootUpstream,
  type Upstream,
} from './lease-calls'
import {
  askUnits,
  DEFAULT_HORIZON_MS,
  leasesFromRoot,
  planStableUntilMs,
  refillPlan,
  shareOfHeld,
  spreadOf,
  type RefillPlan,
} from './lease-sizing'
import {
  demandRate,
  lesseeState,
  paceByAnswer,
  quietDecision,
  snapshotOf,
  spreadWindowStart,
  type Pacing,
} from './lessor-word'
import { offsetOf, rootNowOf, rootTimeOf, spanHere, type ClockOffset } from './lease-clock'
import { LeaseTable } from './lease-table'
import type { ObjectNamespace } from '../calls/object-name'
import type { Region } from '../calls/region'
import { STARTING_MS, type Reservation } from './reservation'
import { delay, unavailableOf, withTimeout } from '../calls/rpc'
import { clientStats, type ClientStats } from '../calls/stats'

/** A key unused this long hands its unspent units back on the next touch of the book (ms). */
export const QUIET_MS = 1_000
/** Keys a book keeps, least recently used dropped first (their units handed back). */
const MAX_KEYS = 10_000
/** The least a lessee waits before asking an overloaded lessor again (ms). */
const OVERLOAD_QUIET_MS = 500

/** Where an isolate is when the request says nothing of it (local runs). */
const UNKNOWN_LOCATION = 'local'

/** How a book reads the clock and keeps background calls alive. */
export interface LeaseBookOptions {
  /** The clock (ms); `Date.now` by default. */
  now?: () => number
  /** Keeps a background call running past the request (`waitUntil` by default). */
  keepAlive?: (promise: Promise<unknown>) => void
  /** Where calls and decisions are counted; the isolate's by default. */
  stats?: ClientStats
  /** Who the book is to its lessors; a random id by default. */
  id?: string
  /** Where the isolate is (`request.cf.colo`), if known from the start. */
  location?: string
  /** Its region, if known from the start. */
  region?: Region
  /** A key its lessor found scarce stays so for the rest of its window (a root's lessee). */
  scarceForWindow?: boolean
  /**
   * How long units that lapsed are gathered before they go back (ms; 0, by default: at once).
   * A location's object gathers what its isolates hand back at a window's end into one call.
   */
  lapsedGatherMs?: number
  /** How long a key goes unused before its units go back ({@link QUIET_MS} by default; ms). */
  quietMs?: number
  /**
   * Whether its asks say it is just starting (`LeaseAsk.starting`); by default, while the book
   * is under {@link STARTING_MS} old.
   */
  starting?: (nowMs: number) => boolean
  /**
   * Whether its lessee runs one version of the rules at a time (an isolate, the default): a new
   * policy for a key's tier then replaces the old one's lease, its units handed back at once.
   * A location's object, serving isolates of both versions while an edit propagates, keeps both.
   */
  oneVersion?: boolean
  /**
   * A book of a tier with a tier below it (a regional object's, a location object's leasing
   * through one): how many horizons ahead it asks for the next window's units, and the least
   * horizon it plans by while the key is not scarce.
   */
  regional?: { leastHorizonMs?: number; aheadHorizons: number }
}

/** A book's record of a key: what it holds, and the lessor it holds it from. */
interface BookLease extends KeyLease {
  to: Upstream
  /** The last refill plan, while it holds (see `planStableUntilMs`). */
  plan?: RefillPlan | undefined
  planUntilMs?: number | undefined
  /** What the takers waiting for a reservation want beyond their need. */
  waitingExtra: number
}

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

/** The clock of a lessee that has not heard from its lessor: read as the root's. */
const SAME_CLOCK: ClockOffset = { lowMs: 0, highMs: 0 }

/** An upstream made once for what it was made with, remade when that changes. */
class MadeUpstream {
  #to: Upstream | undefined
  #namespace: ObjectNamespace | undefined
  #timeoutMs = 0
  #stats: ClientStats | undefined

  /** The upstream for these, made by `make` unless the one made last was for them. */
  get(
    namespace: ObjectNamespace,
    timeoutMs: number,
    stats: ClientStats,
    make: () => Upstream
  ): Upstream {
    if (
      this.#to &&
      this.#namespace === namespace &&
      this.#timeoutMs === timeoutMs &&
      this.#stats === stats
    )
      return this.#to
    this.#namespace = namespace
    this.#timeoutMs = timeoutMs
    this.#stats = stats
    return (this.#to = make())
  }
}

/** The default clock: one function for every book (not a closure each). */
const wallClock = (): number => Date.now()

/**
 * One lessee's leases: per key, the units it holds and the lessor's last word. One per isolate
 * ({@link isolateLeases}) and one per location object; tests make several.
 */
export class LeaseBook {
  /** Who the book is to its lessors. */
  readonly id: string
  readonly #leases: LeaseTable<BookLease, Upstream>
  readonly #now: () => number
  readonly #ownStats: ClientStats | undefined
  readonly #handBack: HandBack
  #location: string | undefined
  #region: Region | undefined
  /** Where in a horizon this book asks on its own, and how long a scarce key stays so. */
  readonly #pacing: Pacing
  /** How long a key goes unused before its units go back (ms). */
  readonly quietMs: number
  #lastSweepMs = 0
  /** Whether its asks say it is just starting ({@link LeaseBookOptions.starting}). */
  readonly #starting: (nowMs: number) => boolean
  /**
   * The isolate's lessors, each made once (a request makes none) and remade if what made it
   * changed: its location's object, and the key's root for a key leased straight from it
   * ({@link leasesFromRoot}).
   */
  readonly #locationTo = new MadeUpstream()
  readonly #root = new MadeUpstream()

  /** @param options - clock, keep-alive, stats, id and location (defaults for production) */
  constructor(options: LeaseBookOptions = {}) {
    this.#now = options.now ?? wallClock
    this.#ownStats = options.stats
    this.id = options.id ?? crypto.randomUUID()
    this.#pacing = {
      spread: spreadOf(this.id),
      scarceForWindow: options.scarceForWindow ?? false,
      ...options.regional,
    }
    const startedMs = this.#now()
    this.#starting = options.starting ?? ((nowMs) => nowMs - startedMs < STARTING_MS)
    this.#location = options.location
    this.#region = options.region
    this.#handBack = new HandBack(
      options.keepAlive ?? keepAliveInRequest,
      options.lapsedGatherMs ?? 0
    )
    this.quietMs = options.quietMs ?? QUIET_MS
    this.#leases = new LeaseTable<BookLease, Upstream>({
      maxKeys: MAX_KEYS,
      make: (ref, nowMs, to) => ({
        ...newKeyLease(ref, DEFAULT_HORIZON_MS, nowMs),
        to,
        plan: undefined,
        planUntilMs: undefined,
        waitingExtra: 0,
      }),
      release: (lease, nowMs) => this.#handBack.all(lease, nowMs),
      oneVersion: options.oneVersion ?? true,
    })
  }

  /** The counters this book's decisions go to: its own, else the isolate's. */
  #stats(): ClientStats {
    return this.#ownStats ?? clientStats()
  }

  /**
   * Notes where this isolate is (its first request's `cf.colo`; an isolate never moves).
   *
   * @param location - the data center's code, if the request has one
   * @param region - its region, if the request says (`regionOf`)
   */
  locate(location: string | undefined, region?: Region): void {
    if (this.#location !== undefined || location === undefined) return
    this.#location = location
    this.#region = region
  }

  /** Whether this isolate's location is known. */
  get located(): boolean {
    return this.#location !== undefined
  }

  /**
   * Decides a request under a leased rule, as an isolate: from the units held when they cover
   * its cost (`local`), otherwise after one reservation from the location's object
   * (`durableObject`), which denies with the lessor's retry time when it grants nothing.
   * Failures follow the call's fail mode. A local decision comes back as it is, not in a
   * promise (the request path and the scale simulator skip a turn of the event loop).
   *
   * @param namespace - the `LIMITER` binding
   * @param call - a check whose policy is leasable
   * @param timeoutMs - the longest wait for a reservation
   * @throws {LimiterUnavailableError} when the key fails closed
   */
  charge(
    namespace: ObjectNamespace,
    call: ChargeCall,
    timeoutMs: number
  ): ChargeResult | Promise<ChargeResult> {
    const { policy, cost } = call
    if (!isLeasable(policy)) throw new Error(`${policy.algorithm} cannot be leased`)
    const stats = this.#stats()
    const to = leasesFromRoot(policy)
      ? this.#rootOf(namespace, timeoutMs, stats)
      : this.#locationOf(namespace, timeoutMs, stats)
    const ref: LeaseRef = {
      ruleId: call.rule.id,
      placement: call.rule.placement,
      key: call.key,
      policy,
    }
    // Most requests are decided from what is held: answered without a promise.
    const nowMs = this.#now()
    this.#sweep(nowMs)
    const lease = this.#touch(to, ref, nowMs)
    const now = this.#takeNow(lease, cost, cost, nowMs)
    if (now) return this.#charged(stats, call, lease, now)
    return this.take(to, ref, cost, cost).then(
      (taken) => this.#charged(stats, call, lease, taken),
      (error: unknown) => failedCharge(stats, call, unavailableOf(error))
    )
  }

  /** A request decided: its units spent (reported to the lessor, for a bucket). */
  #charged(stats: ClientStats, call: ChargeCall, lease: BookLease, taken: Take): ChargeResult {
    if (taken.lot) addSpent(lease, taken.lot)
    stats.decided(call.rule.id, taken.waited ? 'durableObject' : 'local')
    // One shape for every result: the request path reads them all.
    const { decision, waited } = taken
    return {
      enforced: true,
      decision,
      local: waited ? undefined : true,
      decidedAtMs: waited ? taken.decidedAtMs : undefined,
      chargedAtMs: taken.lot?.chargedAtMs,
    }
  }

  /**
   * Takes between `min` and `max` units of a key: from what is held when it covers `min`
   * (without a call), else after a reservation from `to`. Units spendable now only; with `min`
   * 0 it never waits, and gives what is held (perhaps nothing), starting a refill.
   *
   * @param to - the key's lessor
   * @param ref - the key and its policy
   * @param min - the least of use (a request's cost), or 0
   * @param max - the most wanted
   * @param deadlineMs - past it, a request still without units is denied for now (a lessor
   *   slow under load), rather than left to time out upstream
   * @param sendAtMs - a reservation this take starts is sent no sooner (the takes that come
   *   meanwhile join it)
   * @throws {LimiterUnavailableError} when no reservation could be had
   */
  async take(
    to: Upstream,
    ref: LeaseRef,
    min: number,
    max: number,
    deadlineMs = Number.POSITIVE_INFINITY,
    sendAtMs = 0
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
      const lease = this.#touch(to, ref, nowMs)
      first ??= lease
      const now = this.#takeNow(lease, min, max, nowMs)
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
      const held = this.#held(lease, nowMs)
      const stale = lease.pending && nowMs - lease.pending.sinceMs > 2 * to.timeoutMs
      // A short key: what other lessees lack, this one would wait for. Denied now, the request
      // costs no wait, and the refill serves the requests after it (demand exceeds the room).
      // Its lessor short itself gives what it holds; short only upstream, it fetches the need.
      const shortHere = lease.shortWaitMs !== undefined
      if ((shortHere || nowMs < (lease.rootShortUntilMs ?? 0)) && !waited && min > 0) {
        if (!lease.pending || stale)
          this.#handBack.run(
            this.#reserve(lease, nowMs, max - held.now, shortHere ? 0 : min).promise
          )
        lease.demandSinceReserve += max
        return { granted: 0, decision: quietDecision(lease, nowMs), waited }
      }
      const pending =
        lease.pending && !stale
          ? lease.pending
          : // What the caller wants, not only what it needs: a location's object asking the
            // root for an isolate fetches that isolate's batch in the same round trip.
            this.#reserve(
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
    const held = this.#held(lease, nowMs)
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
   */
  #takeNow(lease: BookLease, min: number, max: number, nowMs: number): Take | undefined {
    const held = this.#held(lease, nowMs)
    if (held.now < min && this.#pacing.scarceForWindow)
      spreadWindowStart(lease, nowMs, this.#pacing.spread)
    if (held.now >= min) {
      const units = shareOfHeld(held.now, min, max, lease.waiting + lease.waitingExtra)
      lease.demandSinceReserve += max
      // Taken before a refill is planned: a refill may hand back what is held beyond need.
      const lot = units > 0 ? takeUnits(lease, units, nowMs) : undefined
      const heldBefore = held.now
      held.now -= units
      this.#refillAhead(lease, nowMs, held)
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
   * Keeps units a lessee reports spent, to report with this book's next ask of the key (a
   * location's object passing its isolates' reports on to the root).
   *
   * @param ref - the key and its policy
   * @param lots - the units spent, by the hold they came from
   */
  noteSpent(ref: LeaseRef, lots: readonly Lot[]): void {
    const lease = this.#leases.get(ref)
    if (lease) for (const lot of lots) addSpent(lease, lot)
  }

  /**
   * Takes up to `units` of a key's units that may be spent in the window beginning at
   * `windowMs` (for a lessee of this book's own asking ahead), without a call: a book asks for
   * the next window's units itself before the window ends.
   *
   * @param ref - the key and its policy
   * @param units - units wanted
   * @param windowMs - the window's start
   */
  takeAhead(ref: LeaseRef, units: number, windowMs: number): Lot | undefined {
    const lease = this.#leases.get(ref)
    if (!lease) return undefined
    this.#held(lease, this.#now())
    return takeAhead(lease, units, windowMs)
  }

  /**
   * How long until this book asks the key's lessor again, when its lessor said the key is
   * scarce (ms; 0 when it may ask now).
   *
   * @param ref - the key and its policy
   */
  quietForMs(ref: LeaseRef): number {
    const lease = this.#leases.get(ref)
    return lease === undefined ? 0 : Math.max(0, lease.quietUntilMs - this.#now())
  }

  /**
   * Whether this book's lessor said the key is short: it was scarce in this window (a root's
   * lessee), or the book waits before asking again.
   *
   * @param ref - the key and its policy
   */
  isShort(ref: LeaseRef): boolean {
    const lease = this.#leases.get(ref)
    const nowMs = this.#now()
    return lease !== undefined && (nowMs < lease.scarceUntilMs || nowMs < lease.quietUntilMs)
  }

  /**
   * The lessor's decision in its last answer for a key (what it had left then, held units
   * counted as spent), if it answered yet.
   *
   * @param ref - the key and its policy
   */
  lessorDecision(ref: LeaseRef): Decision | undefined {
    return this.#leases.get(ref)?.snapshot
  }

  /**
   * Whether this book's lessor said in this window that the key has less room than was asked
   * (a root's lessee): not merely that it waits (after an overloaded lessor, say).
   *
   * @param ref - the key and its policy
   */
  isScarce(ref: LeaseRef): boolean {
    const lease = this.#leases.get(ref)
    return lease !== undefined && this.#now() < lease.scarceUntilMs
  }

  /**
   * Whether its lessor passed on the root's word that the key is short (a location object's
   * book, leasing through its region).
   *
   * @param ref - the key and its policy
   */
  isRootShort(ref: LeaseRef): boolean {
    const lease = this.#leases.get(ref)
    return lease !== undefined && this.#now() < (lease.rootShortUntilMs ?? 0)
  }

  /**
   * How long until units of a key are expected here (ms): the answer to the reservation in
   * flight, or to the next one once the lessor's wait is over, a round trip each, or units held
   * for later becoming spendable, whichever comes first; 0 when this book may ask now and has
   * nothing in flight.
   *
   * @param ref - the key and its policy
   */
  unitsDueInMs(ref: LeaseRef): number {
    const lease = this.#leases.get(ref)
    return lease === undefined ? 0 : unitsDueInMs(lease, this.#now())
  }

  /**
   * The root's clock now as this book knows it for a key (earliest and latest), for its own
   * lessees to bound their clocks by; infinite before its lessor answered.
   *
   * @param ref - the key and its policy
   */
  rootNowMs(ref: LeaseRef): [number, number] {
    return rootNowOf(this.#leases.get(ref)?.clock, this.#now())
  }

  /**
   * The root's time now by this book's best reckoning for a key (for planning).
   *
   * @param ref - the key and its policy
   */
  rootTimeMs(ref: LeaseRef): number {
    return rootTimeOf(this.#leases.get(ref)?.clock, this.#now())
  }

  /**
   * Takes units back that a lessee of this book's own did not spend: they join what is held
   * while their span lasts (they were charged at the root as this book's were).
   *
   * @param ref - the key and its policy
   * @param lot - the units handed back
   * @returns whether they were taken (else the caller hands them on to the root)
   */
  takeBack(ref: LeaseRef, lot: Lot): boolean {
    const lease = this.#leases.get(ref)
    if (!lease) return false
    const nowMs = this.#now()
    if (spanHere(lease.clock ?? SAME_CLOCK, lot, nowMs).untilMs > nowMs) addLot(lease, lot, nowMs)
    else if (lease.policy.algorithm === 'sliding-window') {
      // Lapsed at a window's end: gathered with this book's own, and handed on together.
      addLapsed(lease, lot)
      this.#handBack.lapsed(lease)
    } else return false
    return true
  }

  /**
   * Drops a key's leases (under every policy) without handing their units back (the key was
   * reset: they are gone).
   *
   * @param ruleId - the rule
   * @param key - the limit key
   */
  forget(ruleId: string, key: string): void {
    this.#leases.dropKey(ruleId, key)
  }

  /**
   * Drops a key's lease here and in this isolate's location object, without handing units back:
   * the key was reset, and what was leased before was charged in the state the reset wiped.
   * Other locations' objects and isolates keep theirs until their leases end.
   *
   * @param namespace - the `LIMITER` binding
   * @param ref - the key
   * @param timeoutMs - the longest wait for the location's object
   */
  async forgetHere(namespace: ObjectNamespace, ref: LeaseKey, timeoutMs: number): Promise<void> {
    this.forget(ref.ruleId, ref.key)
    const to = this.#locationOf(namespace, timeoutMs, this.#stats())
    await to.forget?.(ref)
  }

  /**
   * Hands a key's unspent units back now and drops its leases (under every policy): its last
   * user here is done with it. A reservation still in flight for it hands its grant back when it
   * lands.
   *
   * @param ruleId - the rule
   * @param key - the limit key
   */
  release(ruleId: string, key: string): void {
    const nowMs = this.#now()
    for (const lease of this.#leases.dropKey(ruleId, key)) this.#handBack.all(lease, nowMs)
  }

  /**
   * Hands back now the units of every key unused for the book's quiet time.
   *
   * @returns whether the book still holds units of any key
   */
  handBackQuiet(): boolean {
    this.#lastSweepMs = Number.NEGATIVE_INFINITY
    const nowMs = this.#now()
    this.#sweep(nowMs)
    for (const lease of this.#leases.values()) {
      const held = this.#held(lease, nowMs)
      if (held.now + held.later > 0) return true
    }
    return false
  }

  /** Hands every unspent unit back now, and waits for it and every background call. */
  async flush(): Promise<void> {
    await this.settled()
    const nowMs = this.#now()
    for (const lease of this.#leases.values()) this.#handBack.all(lease, nowMs)
    await this.settled()
  }

  /** Waits for every background call (refills, refunds) started so far. */
  async settled(): Promise<void> {
    await this.#handBack.settled()
  }

  /** The lessor of this isolate for a key leased straight from its root: the root. */
  #rootOf(namespace: ObjectNamespace, timeoutMs: number, stats: ClientStats): Upstream {
    return this.#root.get(namespace, timeoutMs, stats, () =>
      rootUpstream(namespace, { stats, timeoutMs, lessee: this.id })
    )
  }

  /** The lessor of this isolate: its location's object. */
  #locationOf(namespace: ObjectNamespace, timeoutMs: number, stats: ClientStats): Upstream {
    const make = () =>
      locationUpstream(namespace, this.#location ?? UNKNOWN_LOCATION, {
        stats,
        timeoutMs,
        lessee: this.id,
        region: this.#region,
      })
    // Kept only once located: until then, a later request may still tell where it is.
    return this.#location === undefined
      ? make()
      : this.#locationTo.get(namespace, timeoutMs, stats, make)
  }

  /** The key's lease under its policy, made if there is none; marked most recently used. */
  #touch(to: Upstream, ref: LeaseRef, nowMs: number): BookLease {
    const lease = this.#leases.touch(ref, nowMs, to)
    lease.to = to
    if (lease.reportedRate !== ref.ratePerMs) {
      lease.reportedRate = ref.ratePerMs
      lease.plan = undefined
    }
    return lease
  }

  /**
   * Starts a reservation for `demand` units that waiting requests spend at once, of which
   * `need` at least (0: any), plus what tops the units held up to a batch; and, near a
   * window's end, the next window's batch.
   */
  #reserve(lease: BookLease, nowMs: number, demand: number, need: number, sendAtMs = 0): Pending {
    measureRate(lease, nowMs, need)
    let promise: Promise<Outcome>
    if (sendAtMs > nowMs) {
      // Made when sent: the takers waiting then (this one among them) want their share of it.
      promise = delay(sendAtMs - nowMs).then(() => {
        // The requests that came meanwhile are the demand this ask is sized by.
        measureRate(lease, this.#now())
        const waited = lease.waiting + lease.waitingExtra - this.#held(lease, this.#now()).now
        return this.#ask(lease, Math.max(demand, waited), need)
      })
    } else promise = this.#ask(lease, demand, need)
    const pending: Pending = { promise, sinceMs: nowMs, minUnits: need }
    lease.pending = pending
    void promise.then(() => {
      if (lease.pending === pending) lease.pending = undefined
    })
    return pending
  }

  /** Asks the lessor for `demand` units that waiting requests spend at once (`need` at least). */
  #ask(lease: BookLease, demand: number, need: number): Promise<Outcome> {
    const nowMs = this.#now()
    lease.plan = undefined
    const { policy } = lease
    const plan = this.#planOf(lease, nowMs)
    const held = this.#held(lease, nowMs)
    const { units, nextUnits } = askUnits(
      plan,
      { ...held, now: held.now - held.ending },
      demand,
      lease.shortWaitMs !== undefined || nowMs < lease.scarceUntilMs,
      nowMs >= lease.aheadRefusedUntilMs
    )
    const returned = lease.lapsed
    lease.lapsed = undefined
    const spent = lease.spent
    lease.spent = undefined
    this.#handBack.sentWithAsk(lease)
    // Its lessor sizes and paces this book by it.
    const ratePerMs = demandRate(lease)
    const ask = {
      units,
      minUnits: need,
      ...(ratePerMs !== undefined ? { ratePerMs } : {}),
      nextUnits,
      nextWindowMs: plan.nextWindowMs,
      ...(returned ? { returned } : {}),
      ...(spent ? { spent } : {}),
      ...(this.#starting(nowMs) ? { starting: true as const } : {}),
    }
    return lease.to.reserve(lease, policy, ask).then(
      (reservation): Outcome => {
        // Asked for the next window and given none (its lessor keeps the room for this one):
        // no more asks ahead until that window begins.
        if (nextUnits > 0 && !reservation.next && !reservation.ramp)
          lease.aheadRefusedUntilMs =
            (plan.nextWindowMs ?? 0) - (rootTimeOf(lease.clock, nowMs) - nowMs)
        this.#apply(lease, reservation, nowMs)
        return { ok: true, reservation }
      },
      (error: unknown): Outcome => ({ ok: false, error: unavailableOf(error) })
    )
  }

  /** Adds granted units to the lots, and keeps the lessor's answer and pacing. */
  #apply(lease: BookLease, reservation: Reservation, sentAtMs: number): void {
    const nowMs = this.#now()
    lease.plan = undefined
    lease.snapshot = reservation.decision
    lease.horizonMs = reservation.horizonMs
    lease.roundTripMs = Math.max(0, nowMs - sentAtMs)
    lease.shortWaitMs = undefined
    const { chargedAtMs } = reservation
    const rootNowMs = reservation.rootNowMs ?? [chargedAtMs, chargedAtMs]
    lease.clock = offsetOf(rootNowMs, sentAtMs, nowMs) ?? lease.clock
    for (const lot of lotsOf(reservation)) addLot(lease, lot, nowMs)
    // A lease dropped meanwhile (a reset, a quiet sweep, eviction) takes nothing more.
    if (this.#leases.get(lease) !== lease) this.#handBack.all(lease, nowMs)
    paceByAnswer(lease, reservation, nowMs, this.#pacing)
  }

  /**
   * Reserves the next batch in the background once the units run low (or the next window's
   * are due and missing). A key too slow to spend one unit over the horizon (batch 0)
   * reserves only on demand; a key its lessor called scarce waits out the horizon.
   */
  #refillAhead(lease: BookLease, nowMs: number, held: Held): void {
    // Not before a demand is known: measured here, or reported by this book's lessees (a
    // location's object, whose isolates may ask ahead before it measured a rate of its own).
    if (lease.pending || (lease.rate === undefined && lease.reportedRate === undefined)) return
    const { policy } = lease
    const plan = this.#planOf(lease, nowMs)
    // Too much held (demand fell, or was overestimated): the excess goes back now, where
    // other lessees can spend it. Not while starting: its demand is not measured yet, and its
    // lessor granted it more than it asked for its lessees' first stocks.
    const excess = held.now - plan.keepAtMost
    if (excess > 0 && plan.batch > 0 && !this.#starting(nowMs)) {
      const lot = takeUnits(lease, excess, nowMs)
      this.#handBack.run(lease.to.refund(lease, policy, lot))
      return
    }
    if (plan.batch + plan.nextBatch === 0 || nowMs < lease.quietUntilMs) return
    // Units held for later in this window (a short key's, its ramp's) come in without an ask.
    // Units whose lease ends before the next ask would come are not held for it.
    const low = held.now - held.ending + held.soon < plan.refillBelow
    const aheadMissing =
      plan.aheadDue && nowMs >= lease.aheadRefusedUntilMs && held.later < plan.nextBatch / 2
    if (!low && !aheadMissing) return
    this.#handBack.run(this.#reserve(lease, nowMs, 0, 0).promise)
  }

  /** The key's refill plan: the last one while it holds, else a new one. */
  #planOf(lease: BookLease, nowMs: number): RefillPlan {
    if (lease.plan && nowMs < lease.planUntilMs!) return lease.plan
    const lessee = lesseeState(lease, this.#pacing, this.#now())
    // Planned by the root's time, whose windows the units are charged in (its `nextWindowMs`
    // too, which the ask carries): the plan's ends, by this clock.
    const rootMs = rootTimeOf(lease.clock, nowMs)
    const plan = refillPlan(lease.policy, lessee, rootMs)
    // A scarce key's plan changes when its scarcity ends.
    const scarceEndMs = nowMs < lease.scarceUntilMs ? lease.scarceUntilMs : Infinity
    lease.plan = plan
    lease.planUntilMs = Math.min(planStableUntilMs(lessee, plan) - (rootMs - nowMs), scarceEndMs)
    return plan
  }

  /** What a key holds now and for later; what lapsed unspent goes back. */
  #held(lease: BookLease, nowMs: number): Held {
    const held = heldNow(lease, nowMs, lease.horizonMs)
    if (lease.lapsed) this.#handBack.lapsed(lease)
    return held
  }

  /** At most once per quiet time: hands back the units of keys that went quiet. */
  #sweep(nowMs: number): void {
    if (nowMs - this.#lastSweepMs < this.quietMs) return
    this.#lastSweepMs = nowMs
    for (const lease of this.#leases.values()) {
      if (nowMs - lease.lastUsedMs < this.quietMs) break // most recently used come last
      if (lease.pending) continue
      // Units for later (a window's ramp) wait for it: its lessees went quiet on their
      // lessor's word that the key is short, and come back when that window begins.
      const held = heldNow(lease, nowMs)
      if (held.soon + held.later > 0) continue
      this.#handBack.all(lease, nowMs)
      this.#leases.drop(lease)
    }
  }
}

/** What a promise settles to within `ms`, or `undefined` if it takes longer. */
function settledBy<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  if (ms === Number.POSITIVE_INFINITY) return promise
  return withTimeout(promise, Math.max(0, ms)).catch(() => undefined)
}

let isolateBook: LeaseBook | undefined

/** This isolate's lease book, made on first use. */
export function isolateLeases(): LeaseBook {
  return (isolateBook ??= new LeaseBook())
}
