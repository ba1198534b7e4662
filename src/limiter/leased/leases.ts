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
import { isLeasable } from '../../algorithms/reserve'
import type { Decision } from '../../types'
import type { ChargeCall, ChargeResult } from '../calls/charge-call'
import {
  addLapsed,
  addLot,
  addSpent,
  heldNow,
  newKeyLease,
  takeAhead,
  unitsDueInMs,
  type LeaseKey,
  type Lot,
} from './key-lease'
import { HandBack } from './hand-back'
import { IsolateLessors } from './isolate-lessors'
import { failedCharge, keepAliveInRequest, type Upstream } from './lease-calls'
import { rootNowOf, rootTimeOf, spanHere, type ClockOffset } from './lease-clock'
import { LeaseRefill, type BookLease } from './lease-refill'
import { DEFAULT_HORIZON_MS, leasesFromRoot, spreadOf } from './lease-sizing'
import { LeaseTable } from './lease-table'
import { LeaseTaker, type LeaseRef, type Take } from './lease-take'
import type { Pacing } from './lessor-word'
import type { ObjectNamespace } from '../calls/object-name'
import type { Region } from '../calls/region'
import { STARTING_MS } from './reservation'
import { unavailableOf } from '../calls/rpc'
import { clientStats, type ClientStats } from '../calls/stats'

export type { LeaseRef, Take } from './lease-take'

/** A key unused this long hands its unspent units back on the next touch of the book (ms). */
export const QUIET_MS = 1_000
/** Keys a book keeps, least recently used dropped first (their units handed back). */
const MAX_KEYS = 10_000

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

/** The clock of a lessee that has not heard from its lessor: read as the root's. */
const SAME_CLOCK: ClockOffset = { lowMs: 0, highMs: 0 }

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
  /** Its asks of its lessors, and what it makes of their answers. */
  readonly #refill: LeaseRefill
  /** Its takes of units for requests. */
  readonly #taker: LeaseTaker
  /** Where the isolate is, and its lessors from there. */
  readonly #lessors: IsolateLessors
  /** How long a key goes unused before its units go back (ms). */
  readonly quietMs: number
  #lastSweepMs = 0

  /** @param options - clock, keep-alive, stats, id and location (defaults for production) */
  constructor(options: LeaseBookOptions = {}) {
    this.#now = options.now ?? wallClock
    this.#ownStats = options.stats
    this.id = options.id ?? crypto.randomUUID()
    const pacing: Pacing = {
      spread: spreadOf(this.id),
      scarceForWindow: options.scarceForWindow ?? false,
      ...options.regional,
    }
    const startedMs = this.#now()
    const starting = options.starting ?? ((nowMs: number) => nowMs - startedMs < STARTING_MS)
    this.#lessors = new IsolateLessors(this.id, options.location, options.region)
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
    const parts = { now: this.#now, leases: this.#leases, handBack: this.#handBack, pacing }
    this.#refill = new LeaseRefill(parts, starting)
    this.#taker = new LeaseTaker(parts, this.#refill, (nowMs) => this.#sweep(nowMs))
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
    this.#lessors.locate(location, region)
  }

  /** Whether this isolate's location is known. */
  get located(): boolean {
    return this.#lessors.located
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
      ? this.#lessors.rootOf(namespace, timeoutMs, stats)
      : this.#lessors.locationOf(namespace, timeoutMs, stats)
    const ref: LeaseRef = {
      ruleId: call.rule.id,
      placement: call.rule.placement,
      key: call.key,
      policy,
    }
    // Most requests are decided from what is held: answered without a promise.
    const nowMs = this.#now()
    this.#sweep(nowMs)
    const lease = this.#taker.touch(to, ref, nowMs)
    const now = this.#taker.takeNow(lease, cost, cost, nowMs)
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
  take(
    to: Upstream,
    ref: LeaseRef,
    min: number,
    max: number,
    deadlineMs = Number.POSITIVE_INFINITY,
    sendAtMs = 0
  ): Promise<Take> {
    return this.#taker.take(to, ref, min, max, deadlineMs, sendAtMs)
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
    this.#refill.held(lease, this.#now())
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
    const to = this.#lessors.locationOf(namespace, timeoutMs, this.#stats())
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
      const held = this.#refill.held(lease, nowMs)
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

let isolateBook: LeaseBook | undefined

/** This isolate's lease book, made on first use. */
export function isolateLeases(): LeaseBook {
  return (isolateBook ??= new LeaseBook())
}
