/**
 * @module limiter/lease-sizing
 * How much a lessee holds and when it asks again: pure arithmetic on what it observed (its
 * demand, the round trip to its lessor) and what its lessor told it (the horizon).
 *
 * A lessor paces its lessees: each should hold about `horizon` worth of its demand, so that it
 * calls about once per horizon. The lessor sets the horizon from how many lessees it has, so
 * that its own calls per second stay near a target however many lessees there are ({@link
 * horizonFor}). What lessees hold is what the key's other lessees cannot have: the early-denial
 * budget, at most the demand over the horizon per tier.
 */
import { bucketHoldMs, isWindowed, windowOf, type LeasablePolicy } from '../../algorithms/reserve'
import { RAMP_SLOTS, rampStepMs } from '../../algorithms/sliding-window-ramp'
import type { Decision } from '../../types'
import type { Held } from './key-lease'

/** A batch is at most this share of the key's capacity (limit, or burst for a bucket). */
const CAP_SHARE = 1 / 8

/**
 * A key whose limit is under this many units a second is leased by each isolate straight from
 * its root object, with no object in its location between them. Its admissions are at most this
 * many a second, so its root carries what exact mode's would; a location's object would add an
 * object request to each of the root's (an isolate's call to it, its own to the root): at 300
 * isolates a key of 10 a second cost 19.4 object requests a second through location objects,
 * exact mode 9.7 (`npm run simulate:scale -- --scenario small-key --isolates 300`). Flooded by
 * many isolates, its root hears from each once per horizon, as exact mode's hears from each once
 * per retry time.
 */
export const ROOT_LEASED_RATE_PER_S = 100

/**
 * Whether a key's isolates lease straight from its root object ({@link ROOT_LEASED_RATE_PER_S}).
 *
 * @param policy - a leasable policy
 */
export function leasesFromRoot(policy: LeasablePolicy): boolean {
  return (policy.limit * 1000) / policy.periodMs < ROOT_LEASED_RATE_PER_S
}

/** The horizon a lessee assumes before its lessor has told it one (ms). */
export const DEFAULT_HORIZON_MS = 250

/** What a lessor aims at: its calls per second, and the shortest and longest horizon. */
export interface Pacing {
  callsPerSecond: number
  minHorizonMs: number
  maxHorizonMs: number
}

/** The key's root object: a few hundred locations call it about once a second at most each. */
export const ROOT_PACING: Pacing = { callsPerSecond: 150, minHorizonMs: 200, maxHorizonMs: 4_000 }

/**
 * The key's root object while its key is short of room: what lessees hold between asks is then
 * what other lessees are denied, and a sliding window's units held at its end are lost, so the
 * root spends more of its calls on shorter horizons.
 */
export const SCARCE_ROOT_PACING: Pacing = { ...ROOT_PACING, callsPerSecond: 200, minHorizonMs: 50 }

/** A location's object: the isolates of one location, which are near it. */
export const LOCATION_PACING: Pacing = {
  callsPerSecond: 200,
  minHorizonMs: 250,
  maxHorizonMs: 2_000,
}

/**
 * A location's object while the root says the key is short, when this is the shorter horizon:
 * a few isolates ask more often (one alone every 100 ms, then 25 ms later for each past four,
 * back to {@link LOCATION_PACING} at ten). The object gets the key's room in steps (units for
 * later, every 50 ms), and at one ask in 250 ms an isolate alone at its location fetched a
 * window's last steps too late to spend them.
 */
export const SHORT_LOCATION_PACING: Pacing = {
  callsPerSecond: 40,
  minHorizonMs: 100,
  maxHorizonMs: LOCATION_PACING.maxHorizonMs,
}

/** The shortest horizon while a key has at least half its room left (ms). */
const ROOMY_MIN_HORIZON_MS = 1_000

/**
 * A lessor's pacing for a key with at least half its room left after this answer: its lessees
 * ask about once a second at most. What they hold beyond their need is then not what another
 * lessee is denied, and each ask is a billed Durable Object call. The key's use passes half its
 * room before it runs out, and from the next answers on its lessees ask as often as before.
 *
 * @param pacing - the lessor's pacing otherwise
 * @param decision - the root's decision: in this answer, or the last a location object heard
 *   (none yet: `pacing`)
 */
export function pacingFor(
  pacing: Pacing,
  decision: Pick<Decision, 'limit' | 'remaining'> | undefined
): Pacing {
  if (decision === undefined || decision.remaining * 2 < decision.limit) return pacing
  return { ...pacing, minHorizonMs: Math.max(pacing.minHorizonMs, ROOMY_MIN_HORIZON_MS) }
}

/** Time on top of twice the round trip that a refill is started before it is needed (ms). */
const REFILL_MARGIN_MS = 10

/**
 * How long a lessee of a scarce key waits between asks: three quarters to five quarters of the
 * horizon, by its own `spread` (a horizon on average), so lessees that found the key scarce
 * together ask again apart, and each knows when its next ask comes.
 *
 * @param horizonMs - the lessor's horizon
 * @param spread - the lessee's place in `[0, 1)` ({@link spreadOf})
 */
export function scarceWaitMs(horizonMs: number, spread: number): number {
  return horizonMs * (0.75 + 0.5 * spread)
}

/** A horizon is at most this share of the key's period: a short limit's room comes back fast. */
const PERIOD_SHARE = 1 / 4

/**
 * The horizon a lessor gives its lessees: long enough that `lessees` calling once per horizon
 * make its target of calls per second, within its bounds, and at most a quarter of the key's
 * period (a key limited per second has room again within the second: a lessee that waited two
 * seconds to ask again would be denied early).
 *
 * @param lessees - lessees seen lately
 * @param pacing - the lessor's target and bounds
 * @param periodMs - the key's period, if known
 */
export function horizonFor(
  lessees: number,
  pacing: Pacing,
  periodMs = Number.POSITIVE_INFINITY
): number {
  const ms = (Math.max(1, lessees) * 1000) / pacing.callsPerSecond
  const longest = Math.min(pacing.maxHorizonMs, PERIOD_SHARE * periodMs)
  return Math.max(1, Math.min(longest, Math.max(pacing.minHorizonMs, Math.ceil(ms))))
}

/**
 * The most units one lessee holds for a key: {@link CAP_SHARE} of its capacity, at least 1.
 *
 * @param policy - a leasable policy
 */
export function batchCap(policy: LeasablePolicy): number {
  const capacity = 'burst' in policy ? policy.burst : policy.limit
  return Math.max(1, Math.floor(capacity * CAP_SHARE))
}

/** Near a window's end a batch holds its demand to the end times this, at least. */
const END_MARGIN = 1.25

/** A batch holds this many horizons of demand; a lessee refills at a third of it (see below). */
const BATCH_HORIZONS = 1.5

/**
 * The units to hold: the demand over one and a half horizons (less when the window ends
 * sooner), at most {@link batchCap}; 0 for a key whose demand is under a unit over that time (it
 * reserves each request's cost when it comes, and holds nothing). Refilled at half a horizon's
 * demand (see {@link refillPlan}), a lessee calls about once per horizon.
 *
 * Near a window's end a batch is the demand to the end with a margin: `endMargin` times it, or
 * three standard deviations of a Poisson count over it when that is more (a lessee with a few
 * requests to go, whose count strays far from its mean). With a margin, a lessee rarely runs out
 * just before the end (and calls on demand), and a few units left at the end are all it costs:
 * they go back to the key's object, as room for the next window; on a scarce key, whose demand
 * exceeds what there is, a margin would only be units lost at the end.
 *
 * @param policy - a leasable policy
 * @param ratePerMs - units demanded per ms lately, if known
 * @param horizonMs - the lessor's horizon
 * @param nowMs - the lessee's clock
 * @param endMargin - the batch near a window's end, in demands to the end
 */
export function batchSize(
  policy: LeasablePolicy,
  ratePerMs: number | undefined,
  horizonMs: number,
  nowMs: number,
  endMargin = END_MARGIN
): number {
  const leftMs = spanLeftMs(policy, nowMs)
  const rate = ratePerMs ?? 0
  const toEnd = rate * leftMs
  const endWanted =
    isWindowed(policy) && endMargin > 1
      ? Math.max(endMargin * toEnd, toEnd + 3 * Math.sqrt(toEnd))
      : toEnd
  const wanted = Math.min(rate * (BATCH_HORIZONS * horizonMs), endWanted)
  return wanted < 1 ? 0 : Math.min(batchCap(policy), Math.ceil(wanted))
}

/**
 * Whether a lessee's demand is under a unit over the time a batch lasts (1.5 horizons): it holds
 * nothing, and asks for each request's cost when the request comes. It calls less than once a
 * horizon whatever its lessor says, so a scarce answer neither quiets it nor has it deny without
 * asking: a sliding window's room comes back as it slides, and exact mode would ask too.
 *
 * @param ratePerMs - units demanded per ms lately
 * @param horizonMs - the lessor's horizon
 */
export function asksOnDemand(ratePerMs: number, horizonMs: number): boolean {
  return ratePerMs * BATCH_HORIZONS * horizonMs < 1
}

/** How long units reserved now may be spent: a window's to its end, a bucket's over its hold. */
function spanLeftMs(policy: LeasablePolicy, nowMs: number): number {
  return isWindowed(policy)
    ? windowOf(policy, nowMs) + policy.periodMs - nowMs
    : bucketHoldMs(policy)
}

/** What a lessee knows that sizes its refills. */
export interface LesseeState {
  /** Units demanded per ms lately. */
  ratePerMs: number
  /** The lessor's horizon (ms). */
  horizonMs: number
  /** The last round trip to the lessor (ms). */
  roundTripMs: number
  /** Where in a horizon this lessee asks ahead on its own, in `[0, 1)` ({@link spreadOf}). */
  spread: number
  /** Whether the lessor said lately that the key is scarce. */
  scarce: boolean
  /** When the lessor said when to come back (a scarce key): the time to the next ask (ms). */
  waitMs?: number
  /**
   * How many horizons before a window's end it asks for the next window's units at the latest
   * (1 by default): a tier with a tier below it asks sooner than that tier (a regional object
   * 3, a location object leasing through one 2), so it holds those units when they ask.
   */
  aheadHorizons?: number
  /** The horizon its asks ahead are timed in, if not `horizonMs` (a regional object's least). */
  aheadHorizonMs?: number
}

/** What a lessee's demand and its lessor's pacing call for now. */
export interface RefillPlan {
  /** Units to hold for spending now. */
  batch: number
  /** Units to hold for the next window, once asked for (its window has just begun then). */
  nextBatch: number
  /** When the next window begins (windowed policies). */
  nextWindowMs?: number
  /** More than this held (demand fell, or was overestimated) goes back at once. */
  keepAtMost: number
  /** Refill once fewer are held; 0: no refill now (too near the window's end). */
  refillBelow: number
  /** Ask for the next window's units with any refill (near a window's end). */
  aheadWanted: boolean
  /** Ask for them even without a refill: they must be there when the window begins. */
  aheadDue: boolean
}

/**
 * When to refill and how much: a batch of demand over 1.5 horizons, refilled at half a horizon's
 * demand (or what is spent while a refill travels there and back, twice the round trip plus a
 * margin), so a lessee calls about once per horizon. Near a window's end the batch shrinks to
 * what the window has left, and in its last half horizon the lessee stops refilling (what it
 * lacks then it asks for on demand): a batch charged to a window is lost at its end. From two
 * horizons before the end, refills also ask for the next window's batch, and between one and
 * two horizons before it, at a point picked by `spread` (0 ≤ spread < 1, the lessee's own), the
 * lessee asks for it alone: so the next window's units are there when it begins, a lessor has
 * its own before its lessees ask for theirs (their horizon is shorter), and the asks are spread
 * over a horizon rather than all at the end. A lessee with `aheadHorizons` a asks that much
 * sooner: from a + 1 horizons before the end, alone between a and a + 1 (a regional object,
 * whose lessees' horizons are as long as its own).
 *
 * @param policy - a leasable policy
 * @param lessee - its demand, its lessor's horizon and how far it is
 * @param nowMs - the lessee's clock
 */
export function refillPlan(policy: LeasablePolicy, lessee: LesseeState, nowMs: number): RefillPlan {
  const { ratePerMs, horizonMs, roundTripMs, spread } = lessee
  const ahead = lessee.aheadHorizons ?? 1
  const aheadMs = lessee.aheadHorizonMs ?? horizonMs
  const lead = 2 * roundTripMs + REFILL_MARGIN_MS
  // A scarce key's lessee holds what it spends until its next ask (when its lessor said when,
  // then), no more: a surplus held by the lessees served first is room the others, asking
  // later, no longer find; and what it asks for is what its lessor counts as its demand.
  const batch = lessee.scarce
    ? scarceBatch(
        policy,
        ratePerMs,
        Math.min(
          (lessee.waitMs ?? scarceWaitMs(horizonMs, spread)) + lead,
          spanLeftMs(policy, nowMs)
        )
      )
    : // A lessee far from its lessor holds at least two refills' travel of its demand, so that a
      // refill lands before it runs out.
      batchSize(policy, ratePerMs, Math.max(horizonMs, (2 * lead) / BATCH_HORIZONS), nowMs)
  const below = Math.min(ratePerMs * Math.max(horizonMs / 2, lead), batch / 2)
  if (!isWindowed(policy))
    return {
      batch,
      nextBatch: 0,
      keepAtMost: Math.max(1, 3 * batch),
      refillBelow: below,
      aheadWanted: false,
      aheadDue: false,
    }
  const leftMs = windowOf(policy, nowMs) + policy.periodMs - nowMs
  // A whole batch, as at a window's start: what is held for the rest of this one is less.
  const nextBatch = batchSize(policy, ratePerMs, horizonMs, nowMs + leftMs)
  return {
    batch,
    nextBatch,
    keepAtMost: Math.max(1, 3 * nextBatch),
    nextWindowMs: nowMs + leftMs,
    refillBelow: leftMs > horizonMs / 2 ? below : 0,
    aheadWanted: leftMs <= (1 + ahead) * aheadMs + lead,
    aheadDue: leftMs <= lead + (ahead + spread) * aheadMs,
  }
}

/**
 * What an ask asks for: `demand` (units waiting requests spend at once) plus what tops the units
 * held up to a batch when the plan says refill; a scarce key, what it can spend until its next
 * ask, near a window's end too (that covers the requests waiting now, part of its demand; on
 * top of them a batch would be units held here that other lessees, short too, are denied). Units
 * granted for later in this window (a short key's) count as held. And when the next window's
 * units are wanted ahead and may be asked for (`aheadOpen`), what tops those up to its batch.
 *
 * @param plan - the key's refill plan
 * @param held - what the lessee holds
 * @param demand - units requests waiting now spend at once (0: a refill in the background)
 * @param scarce - whether its lessor said the key is short
 * @param aheadOpen - whether it may ask for the next window's units now
 */
export function askUnits(
  plan: RefillPlan,
  held: Pick<Held, 'now' | 'soon' | 'later'>,
  demand: number,
  scarce: boolean,
  aheadOpen: boolean
): { units: number; nextUnits: number } {
  const topUp = Math.max(0, (plan.refillBelow > 0 || scarce ? plan.batch : 0) - held.soon)
  const units =
    demand > 0
      ? scarce
        ? Math.max(demand, topUp - held.now)
        : demand + topUp
      : Math.max(0, topUp - held.now)
  const nextUnits = plan.aheadWanted && aheadOpen ? Math.max(0, plan.nextBatch - held.later) : 0
  return { units, nextUnits }
}

/**
 * Until when a refill plan made now stays the one {@link refillPlan} would make, while nothing
 * the lessee knows changes: far from a window's end a plan does not depend on the time (a
 * bucket's never does), so a lessee spending from what it holds need not plan again.
 *
 * @param lessee - what sized the plan
 * @param plan - the plan
 */
export function planStableUntilMs(lessee: LesseeState, plan: RefillPlan): number {
  if (plan.nextWindowMs === undefined) return Number.POSITIVE_INFINITY
  const lead = 2 * lessee.roundTripMs + REFILL_MARGIN_MS
  // Past this far from the end, the batch, the refill point and the asks ahead all change.
  const reach =
    (2 + (lessee.aheadHorizons ?? 1)) *
      Math.max(lessee.horizonMs, lessee.aheadHorizonMs ?? 0, (2 * lead) / BATCH_HORIZONS) +
    2 * lead +
    (lessee.waitMs ?? 2 * lessee.horizonMs)
  return plan.nextWindowMs - reach
}

/** A scarce key's batch: its demand until the next ask, at most {@link batchCap}. */
function scarceBatch(policy: LeasablePolicy, ratePerMs: number, untilNextAskMs: number): number {
  const wanted = ratePerMs * untilNextAskMs
  return wanted < 1 ? 0 : Math.min(batchCap(policy), Math.ceil(wanted))
}

/**
 * A lessee's own place in `[0, 1)`, from its id (FNV-1a): where it asks ahead on its own.
 *
 * @param id - the lessee's id
 */
export function spreadOf(id: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return (hash >>> 0) / 2 ** 32
}

/**
 * A lessee's share of a sliding window's next ramp (units): its demand over the ramp's span,
 * scaled down so that the lessees' shares together are at most the room the ramp has (the
 * limit's rate over its span) when their demand exceeds that rate. Without it, the lessees
 * asking first would take the whole ramp, and the others begin the window with nothing.
 * `undefined` (no cap) when the lessee's demand is not known.
 *
 * @param policy - a sliding window
 * @param ratePerMs - the lessee's demand (units per ms), if it said
 * @param totalPerMs - the demand of all the lessor's lessees that said theirs
 */
export function rampShare(
  policy: LeasablePolicy,
  ratePerMs: number | undefined,
  totalPerMs: number | undefined
): number | undefined {
  const share = shareOver(policy, ratePerMs, totalPerMs, RAMP_SLOTS * rampStepMs(policy.periodMs))
  return share === undefined ? undefined : Math.ceil(share)
}

/**
 * A lessee's share of each step of a short sliding window's room (units per step of the ramp's
 * time, a fraction: a lessee under a unit per step gets one every few steps): what it may be
 * granted for each step's time later in the window (see `reserveLater`). Scaled as the ramp's.
 *
 * @param policy - a sliding window
 * @param ratePerMs - the lessee's demand (units per ms), if it said
 * @param totalPerMs - the demand of all the lessor's lessees that said theirs
 */
export function stepShare(
  policy: LeasablePolicy,
  ratePerMs: number | undefined,
  totalPerMs: number | undefined
): number | undefined {
  return shareOver(policy, ratePerMs, totalPerMs, rampStepMs(policy.periodMs))
}

/** A lessee's demand over `spanMs`, scaled down to its share of the limit's rate. */
function shareOver(
  policy: LeasablePolicy,
  ratePerMs: number | undefined,
  totalPerMs: number | undefined,
  spanMs: number
): number | undefined {
  if (ratePerMs === undefined) return undefined
  const limitPerMs = policy.limit / policy.periodMs
  const scale = Math.min(1, limitPerMs / Math.max(totalPerMs ?? 0, ratePerMs))
  return spanMs * ratePerMs * scale
}

/**
 * What one take is given of the units a book holds (or a grant just landed with) when other
 * takes wait for them too: all it wants when none does, else its share in proportion to what
 * each wants, never less than it needs. Served whole in turn, the first takes a lessor woke
 * (a location's object for its isolates' batches) spent a grant, and those after them, needing
 * a unit or two, waited for the next round trip to the root.
 *
 * @param available - units held (at least `need`)
 * @param need - what the take needs
 * @param want - what it asks for at most
 * @param othersWant - what the other waiting takes ask for at most, together
 */
export function shareOfHeld(
  available: number,
  need: number,
  want: number,
  othersWant: number
): number {
  if (othersWant <= 0) return Math.min(want, available)
  return Math.min(want, Math.max(need, Math.floor((available * want) / (want + othersWant))))
}
