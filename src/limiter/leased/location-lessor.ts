/**
 * @module limiter/location-lessor
 * A key's object in one location (leased quotas): a lessee of the key's root object, holding
 * units in a lease book of its own, and the lessor of the isolates of its location. It keeps
 * nothing in storage: what it holds lives in memory, and a restart loses it (those units go
 * unspent: under-admission, never over). The root hears from locations, so its load follows
 * the number of locations, not of isolates; the isolates' calls stay in the location.
 */
import type { LeasablePolicy } from '../../algorithms/reserve'
import type { LeaseKey, Lot } from './key-lease'
import { REGION_PREFIX, regionUpstream, rootUpstream, type Upstream } from './lease-calls'
import {
  batchSize,
  horizonFor,
  LOCATION_PACING,
  pacingFor,
  type Pacing,
  SHORT_LOCATION_PACING,
  spreadOf,
} from './lease-sizing'
import { LeaseBook, QUIET_MS } from './leases'
import { unheardDecision } from './lessor-word'
import { Lessees } from './lessees'
import type { ObjectNamespace } from '../calls/object-name'
import { isRegion, type Region } from '../calls/region'
import type { LesseeAsk, Reservation } from './reservation'
import { ClientStats } from '../calls/stats'

/**
 * The longest a location's object waits for the root (ms): less than an isolate waits for it
 * (`LIMITER_TIMEOUT_MS`, 1 s by default), so an isolate hears why (overloaded: a denial for now;
 * unreachable: its rule's fail mode) rather than timing out itself.
 */
const LOCATION_TIMEOUT_MS = 600

/**
 * Isolates told when this object refills come back over this share of the time its isolates
 * take to call once each at its target rate.
 */
const REFILL_SPREAD = 0.25

/** How long after its call to the root may time out a location's object still answers (ms). */
const ANSWER_MARGIN_MS = 50

/**
 * Units that lapsed at a window's end (this object's, and those its isolates hand back) go to
 * the root with its next ask, or after this long in a call of their own (ms).
 */
const LAPSED_GATHER_MS = 2_000

/**
 * How long a key goes unused here before this object hands its units back and forgets what it
 * measured (ms): a quiet time past the longest horizon it gives, since its isolates call only
 * once a horizon. Forgotten sooner, a location with a few isolates would lose its rate between
 * two ordinary asks and start over as a new lessee at the root.
 */
export const LOCATION_QUIET_MS = LOCATION_PACING.maxHorizonMs + QUIET_MS

/**
 * A location's object that just started, asked by isolates that just started too (as after a
 * deploy), sends its first call to the root at its own point of this long (ms) from its start:
 * after a deploy every location's object starts within the same moment, and their first calls,
 * all within the network's spread (about 150 ms), overflow the root's queue (a root serving a
 * call a millisecond queues about 100). Spread over this long too, they come nearer its pace;
 * the requests that wait for them wait that much longer, once. An isolate that asks before then
 * is told when (`opensInMs`) and asks again then, for the requests that came meanwhile: held
 * until then instead, its ask would size the object's call by its first request alone (at S 1.1
 * over a deploy's first 20 s, p99 400 ms held, 248 ms told). A location's object that starts
 * alone (a key's first request there, from an isolate running for a while) asks at once.
 */
export const OPENING_SPREAD_MS = 500

/**
 * The least time a call to the root after the opening is given (ms): the opening ends this long
 * before what its isolate waits, and the call made then has the rest. A root that just started
 * queues for at most about 100 ms, so that covers a far location's round trip too.
 */
const OPENING_ROOT_TIMEOUT_MS = 400

/**
 * For this long after it opened for a deploy (ms), a location's object counts its isolates that
 * said no demand yet at the mean of those that did ({@link Lessees.expectedRatePerMs}), and
 * tells the root it is starting (which then grants it more than it asks while the key is
 * roomy): none of its isolates has measured its demand yet, and sized by those that did, each of
 * its first calls to the root would be a few units, followed by another as soon as they were
 * spent. Later, an isolate that says none is a new one, or one with a request now and then.
 */
const LEARNING_MS = 1_000

/**
 * After its opening, a location's object that opened for a deploy gathers its isolates' asks
 * for this long (ms) before it calls the root: told when it opens, they ask again then, each
 * within a round trip in the location.
 */
export const GATHER_MS = 20

/** An isolate's ask this close to the opening (ms) waits for it rather than asking again. */
const REASK_LEAST_MS = 50

/** The share of an isolate's wait a location's object gives its own call to the root. */
const BUDGET_SHARE = 0.6

/**
 * The share of it a location's object gives its call to its region: that hop is short, and the
 * region's own call to the root, however far, then has its share of the rest.
 */
const THROUGH_REGION_BUDGET_SHARE = 0.9

/** A key of at least this rate (units per second) leases through regional objects. */
export const REGIONAL_RATE_PER_S = 1_000

/**
 * A regional object's first call to the root, when location objects that just started ask it
 * (a deploy), goes at its own point of this long (ms): eleven regions' first calls are no burst
 * for the root, but a few tens of ms let a region's first ask carry most of its locations' asks.
 */
const REGION_OPENING_MS = 50

/**
 * A regional object's pacing of its location objects while the root says the key is short:
 * shorter horizons than a location's object gives its isolates, as what a location holds then
 * is room the region's other locations lack, and a region has at most a few tens of callers.
 */
const REGION_SHORT_PACING: Pacing = {
  callsPerSecond: 400,
  minHorizonMs: 100,
  maxHorizonMs: LOCATION_PACING.maxHorizonMs,
}

/**
 * While the key is not scarce, a regional object plans by a horizon of at least this (ms): it
 * holds a second of its region's demand, so a location whose traffic jumps (a shift between
 * continents) is served from it rather than after a call to the root.
 */
const REGION_LEAST_HORIZON_MS = 1_000

/**
 * Which tier an object is: a regional object (leasing from the root, serving location objects),
 * a location's object leasing through its region (a key of at least
 * {@link REGIONAL_RATE_PER_S}, whose isolates said their region), or one leasing from the root.
 */
type Tier = 'region' | 'through-region' | 'location'

/** One location object's lessor state. */
export class LocationLessor {
  readonly #name: string
  readonly #lessees = new Lessees()
  readonly #stats: ClientStats
  readonly #now: () => number
  readonly #startedMs: number
  readonly #keepAlive: (promise: Promise<unknown>) => void
  /** Its tier: a region's from its name; a location's from its first ask ({@link #setUp}). */
  #tier: Tier | undefined
  /** The region a location's object leases through. */
  #region: Region | undefined
  #ownBook: LeaseBook | undefined
  /**
   * Its first call to the root, for isolates that just started, goes no sooner
   * ({@link OPENING_SPREAD_MS}).
   */
  #opensAtMs: number
  /** Until when it is learning its isolates' demand after a deploy ({@link LEARNING_MS}). */
  #learningUntilMs = 0
  /** The isolates told to ask again at its opening (each told once). */
  readonly #told = new Set<string>()
  /** Hands back what the location's isolates left unused, while the object holds any. */
  #watch: ReturnType<typeof setTimeout> | undefined

  /**
   * @param name - the object's name: its id to the root
   * @param options - the clock and how background calls are kept running
   */
  constructor(
    name: string,
    options: { now?: () => number; keepAlive?: (promise: Promise<unknown>) => void } = {}
  ) {
    this.#name = name
    this.#now = options.now ?? (() => Date.now())
    this.#startedMs = this.#now()
    this.#stats = new ClientStats(this.#startedMs)
    // An object runs on while it has calls in flight: nothing to extend.
    this.#keepAlive = options.keepAlive ?? (() => undefined)
    const place = name.slice(name.lastIndexOf('@') + 1)
    if (place.startsWith(REGION_PREFIX)) this.#tier = 'region'
    const openingMs = this.#tier === 'region' ? REGION_OPENING_MS : OPENING_SPREAD_MS
    this.#opensAtMs = this.#startedMs + spreadOf(name) * openingMs
  }

  /**
   * A location's object takes its tier from its first ask: through the region the isolate
   * named when the key's rate is high enough to have many locations, else straight from the
   * root. Leasing through a region, it opens at once (the root hears from regions only), and
   * learns its isolates' demand for its first second.
   */
  #setUp(policy: LeasablePolicy, ask: LesseeAsk): void {
    if (this.#tier !== undefined) return
    const perSecond = (policy.limit * 1000) / policy.periodMs
    if (isRegion(ask.region) && perSecond >= REGIONAL_RATE_PER_S) {
      this.#tier = 'through-region'
      this.#region = ask.region
      this.#opensAtMs = this.#startedMs
      this.#learningUntilMs = this.#startedMs + LEARNING_MS
    } else this.#tier = 'location'
  }

  /** Its lease book, made once its tier is known (a hand-back before any ask: a location's). */
  get #book(): LeaseBook {
    return (this.#ownBook ??= new LeaseBook({
      id: this.#name,
      now: this.#now,
      stats: this.#stats,
      // A region is short of units only until its next grant; the root's word comes through it.
      scarceForWindow: this.#tier !== 'through-region',
      lapsedGatherMs: LAPSED_GATHER_MS,
      quietMs: LOCATION_QUIET_MS,
      starting: (nowMs) => nowMs < this.#learningUntilMs,
      keepAlive: this.#keepAlive,
      oneVersion: false,
      ...(this.#tier === 'region'
        ? { regional: { leastHorizonMs: REGION_LEAST_HORIZON_MS, aheadHorizons: 3 } }
        : this.#tier === 'through-region'
          ? { regional: { aheadHorizons: 2 } }
          : {}),
    }))
  }

  /**
   * Answers an isolate's reservation: units from what this object holds (reserving from the
   * root first when it holds less than the isolate's need), units for the next window from
   * what it holds of them, and the horizon for this location's isolates.
   *
   * @param root - the namespace of the key's root object
   * @param lease - the key
   * @param policy - its limit
   * @param ask - the isolate's ask
   * @throws {LimiterUnavailableError} when the root cannot be reached
   */
  async serve(
    root: ObjectNamespace,
    lease: LeaseKey,
    policy: LeasablePolicy,
    ask: LesseeAsk
  ): Promise<Reservation> {
    const nowMs = this.#now()
    this.#setUp(policy, ask)
    this.#lessees.note(ask.lessee, nowMs, ask.ratePerMs)
    const held = { ...lease, policy }
    for (const lot of ask.returned ?? []) this.takeBack(root, lease, policy, lot)
    if (ask.spent) this.#book.noteSpent(held, ask.spent)
    // Opened for a deploy: isolates that just started asked before its opening.
    if (ask.starting && nowMs < this.#opensAtMs) {
      this.#learningUntilMs = this.#opensAtMs + LEARNING_MS
      // Asked again at the opening, with the demand that came meanwhile.
      // A region's lessees are location objects a short hop away, their demand measured by
      // their isolates: their asks wait for its opening rather than come again.
      if (
        this.#tier !== 'region' &&
        this.#opensAtMs - nowMs >= REASK_LEAST_MS &&
        !this.#told.has(ask.lessee)
      ) {
        this.#told.add(ask.lessee)
        return this.#opensLater({ ...lease, policy }, nowMs)
      }
    } else if (this.#told.size > 0) this.#told.clear()
    const ratePerMs =
      nowMs < this.#learningUntilMs
        ? this.#lessees.expectedRatePerMs(nowMs)
        : this.#lessees.ratePerMs(nowMs)
    const ref = { ...lease, policy, ratePerMs }
    // The root is asked within part of what the isolate waits (a far root's round trip fits),
    // once this object opened, with the rest of that wait.
    const budgetMs = ask.budgetMs ?? Infinity
    const fullTimeoutMs =
      this.#tier === 'through-region'
        ? THROUGH_REGION_BUDGET_SHARE * budgetMs
        : Math.min(LOCATION_TIMEOUT_MS, BUDGET_SHARE * budgetMs)
    const leastTimeoutMs = Math.min(fullTimeoutMs, OPENING_ROOT_TIMEOUT_MS)
    const sendsAtMs = nowMs < this.#learningUntilMs ? this.#opensAtMs + GATHER_MS : 0
    const openingMs = ask.starting
      ? Math.max(0, Math.min(sendsAtMs - nowMs, budgetMs - leastTimeoutMs - 2 * ANSWER_MARGIN_MS))
      : 0
    const timeoutMs = Math.min(fullTimeoutMs, budgetMs - openingMs - 2 * ANSWER_MARGIN_MS)
    // Just after that time, too, a request without units is answered: denied for now, when the
    // root is slow under load. (Unreachable, the root's call fails first, at its timeout, and the
    // isolate's fail mode applies.)
    const taken = await this.#book.take(
      this.#lessor(root, timeoutMs),
      ref,
      ask.minUnits,
      this.#wanted(lease, policy, ask, nowMs),
      nowMs + openingMs + timeoutMs + ANSWER_MARGIN_MS,
      nowMs + openingMs
    )
    this.#watchIdle()
    const ahead =
      ask.nextUnits && ask.nextWindowMs !== undefined
        ? this.#book.takeAhead(ref, ask.nextUnits, ask.nextWindowMs)
        : undefined
    // Scarce when the need was refused, or on the root's word: units this object lacks for a
    // moment it fetches.
    const scarce =
      taken.granted < ask.minUnits || (taken.granted < ask.units && this.#book.isShort(held))
    // Isolates turned away come back when this object expects units from the root (its call in
    // flight, or its next once its wait is over), each at its own point of a stretch that grows
    // with their number, so they do not all call at once. Sooner, they would find it waiting,
    // and wait too.
    const lessees = this.#lessees.count(nowMs)
    const horizonMs = this.#horizonMs(lease, policy, scarce, nowMs)
    const refillInMs =
      this.#book.unitsDueInMs(held) +
      (spreadOf(ask.lessee) * REFILL_SPREAD * lessees * 1000) / LOCATION_PACING.callsPerSecond
    // Units keep the span the root charged them for: its clock's, as this object knows it.
    const rootNowMs = this.#book.rootNowMs(held)
    return {
      granted: taken.granted,
      decision: taken.decision,
      chargedAtMs: taken.lot?.chargedAtMs ?? nowMs,
      ...(taken.lot ? { validFromMs: taken.lot.validFromMs } : {}),
      validUntilMs: taken.lot?.validUntilMs ?? nowMs,
      rootNowMs,
      epoch: taken.lot?.epoch ?? '',
      ...(ahead && ahead.units > 0
        ? {
            next: {
              granted: ahead.units,
              validFromMs: ahead.validFromMs,
              validUntilMs: ahead.validUntilMs,
              epoch: ahead.epoch,
            },
          }
        : {}),
      horizonMs,
      scarce,
      refillInMs,
      // The root's own word only: a wait after an overloaded root (a cold start) says nothing
      // of the room, and would have the isolates deny for the rest of the window.
      ...(this.#book.isScarce(held) ||
      (this.#tier === 'through-region' && this.#book.isRootShort(held))
        ? { rootShort: true }
        : {}),
    }
  }

  /** The answer to an isolate that asked before this object's opening: ask again then. */
  #opensLater(ref: LeaseKey & { policy: LeasablePolicy }, nowMs: number): Reservation {
    return {
      granted: 0,
      decision: unheardDecision(ref.policy.limit, nowMs),
      chargedAtMs: nowMs,
      validUntilMs: nowMs,
      rootNowMs: this.#book.rootNowMs(ref),
      epoch: '',
      horizonMs: LOCATION_PACING.minHorizonMs,
      scarce: false,
      opensInMs: this.#opensAtMs - nowMs,
    }
  }

  /**
   * Takes back units an isolate did not spend: held again while they can be spent, else handed
   * on to the root.
   *
   * @param root - the namespace of the key's root object
   * @param lease - the key
   * @param policy - its limit
   * @param lot - the units
   */
  takeBack(root: ObjectNamespace, lease: LeaseKey, policy: LeasablePolicy, lot: Lot): void {
    if (!this.#book.takeBack({ ...lease, policy }, lot))
      void this.#lessor(root, LOCATION_TIMEOUT_MS).refund(lease, policy, lot)
    this.#watchIdle()
  }

  /**
   * Drops what this object holds of a key (it was reset: those units are gone).
   *
   * @param lease - the key
   */
  forget(lease: LeaseKey): void {
    this.#book.forget(lease.ruleId, lease.key)
  }

  /**
   * Once no isolate has used a key for the quiet time, its units go back to the root (a location's
   * object is called for one key: nothing else would wake it to do so).
   */
  #watchIdle(): void {
    if (this.#watch !== undefined) return
    this.#watch = setTimeout(() => {
      this.#watch = undefined
      if (this.#book.handBackQuiet()) this.#watchIdle()
    }, this.#book.quietMs)
  }

  /**
   * What an isolate's ask is given at most: what it asks for, or, for a new isolate (it has
   * measured no demand yet) while the key is not short, a batch at its location's mean demand.
   * Given only its first request's cost, a cold isolate would call for each of its next
   * requests until it had measured its own: at a few isolates starting each second, most of
   * the decisions not made in the isolate.
   */
  #wanted(lease: LeaseKey, policy: LeasablePolicy, ask: LesseeAsk, nowMs: number): number {
    if (ask.ratePerMs !== undefined || this.#book.isShort({ ...lease, policy })) return ask.units
    const meanPerMs = this.#lessees.meanRatePerMs(nowMs)
    if (meanPerMs === undefined) return ask.units
    const horizonMs = this.#horizonMs(lease, policy, false, nowMs)
    const rootMs = this.#book.rootTimeMs({ ...lease, policy })
    return Math.max(ask.units, batchSize(policy, meanPerMs, horizonMs, rootMs))
  }

  /** The horizon this object gives its isolates, from how many there are and the key's room. */
  #horizonMs(lease: LeaseKey, policy: LeasablePolicy, scarce: boolean, nowMs: number): number {
    // Roomy on the root's word: what this object holds is not room other locations have.
    const lessees = this.#lessees.count(nowMs)
    const held = { ...lease, policy }
    if (this.#tier === 'region' && (scarce || this.#book.isScarce(held)))
      return horizonFor(lessees, REGION_SHORT_PACING, policy.periodMs)
    const pacing = scarce
      ? LOCATION_PACING
      : pacingFor(LOCATION_PACING, this.#book.lessorDecision(held))
    const usual = horizonFor(lessees, pacing, policy.periodMs)
    return pacing === LOCATION_PACING && this.#book.isScarce(held)
      ? Math.min(usual, horizonFor(lessees, SHORT_LOCATION_PACING, policy.periodMs))
      : usual
  }

  /** Its own lessor: its region's object, or the key's root. */
  #lessor(root: ObjectNamespace, timeoutMs: number): Upstream {
    const options = { stats: this.#stats, timeoutMs, lessee: this.#name }
    return this.#region !== undefined
      ? regionUpstream(root, this.#region, options)
      : rootUpstream(root, options)
  }
}
