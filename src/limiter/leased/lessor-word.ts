/**
 * @module limiter/lessor-word
 * What a lessee makes of its lessor's answers without a call: how long a key stays scarce or
 * short, when the lessee may ask again, and the decision it gives while it waits. Pure: a
 * lease and the time in, the lease's pacing out.
 */
import { bucketHoldMs, isWindowed, windowOf } from '../../algorithms/reserve'
import type { Decision } from '../../types'
import type { KeyLease } from './key-lease'
import { rootTimeOf, windowEndHere } from './lease-clock'
import { asksOnDemand, scarceWaitMs, type LesseeState } from './lease-sizing'
import type { Reservation } from './reservation'

/**
 * A lessor of lessors plans by its least horizon only while the root's room left is at least
 * this many times its demand over that horizon.
 */
const STOCKS_OF_ROOM = 20

/** At most how far into a window a root's lessee whose units lapsed at its start asks (ms). */
const WINDOW_START_SPREAD_MS = 500

/** How a book paces its asks. */
export interface Pacing {
  /** Where in a horizon it asks on its own, in `[0, 1)` (see `spreadOf`). */
  spread: number
  /** A key its lessor found scarce stays so for the rest of its window (a root's lessee). */
  scarceForWindow: boolean
  /**
   * A lessor of lessors (a regional object) plans by at least this horizon (ms), the least it
   * gives its own lessees: it then holds what they ask for between its asks.
   */
  leastHorizonMs?: number
  /** Horizons before a window's end it asks ahead by at the latest (1 by default). */
  aheadHorizons?: number
}

/**
 * Until when a key found scarce at `nowMs` stays so: for a book whose lessor is the root, two
 * horizons past the window's end (a full window's room comes back only as the window slides on,
 * and the pace carries over its end, where every lessee's units lapse at once); else two
 * horizons (an isolate's lessor, its location, is short of units only until its own next grant).
 */
function scarceUntil(
  lease: KeyLease,
  nowMs: number,
  horizonMs: number,
  forWindow: boolean
): number {
  return forWindow && isWindowed(lease.policy)
    ? windowEndHere(lease.policy, lease.clock, nowMs) + 2 * horizonMs
    : nowMs + 2 * horizonMs
}

/**
 * Until when an isolate keeps its location's word that the root is short: a window's rest (see
 * {@link scarceUntil}); for a bucket, which has no window and stays empty while demand exceeds
 * its rate, as long as its tokens may be held (for two horizons only, an isolate whose tokens
 * outlast them would wait for the next rather than deny).
 */
function rootShortUntil(lease: KeyLease, nowMs: number, horizonMs: number): number {
  const { policy } = lease
  return isWindowed(policy)
    ? scarceUntil(lease, nowMs, horizonMs, true)
    : nowMs + Math.max(2 * horizonMs, bucketHoldMs(policy))
}

/**
 * The key's demand here (units per ms): what its lessees report, else what it measured;
 * `undefined` before either. A lessor of lessees measures the units they ask for, batches
 * ahead of their spending: its lessees' reports are its demand.
 *
 * @param lease - the key's lease
 */
export function demandRate(lease: KeyLease): number | undefined {
  return lease.reportedRate ?? lease.rate ?? lease.provisionalRate
}

function demandOf(lease: KeyLease): number {
  return demandRate(lease) ?? 0
}

/**
 * What sizes the key's refills.
 *
 * @param lease - the key's lease
 * @param pacing - the book's pacing
 * @param nowMs - the time
 */
export function lesseeState(lease: KeyLease, pacing: Pacing, nowMs: number): LesseeState {
  const scarce = lease.shortWaitMs !== undefined || nowMs < lease.scarceUntilMs
  const ratePerMs = demandOf(lease)
  const leastMs = pacing.leastHorizonMs ?? 0
  // What a lessor of lessors holds beyond its own horizon is room others lack once the key is
  // scarce, and when the limit starts to bind it is what the key loses once: so only while the
  // root has room for many such stocks.
  const stocked =
    !scarce &&
    (lease.snapshot?.remaining ?? Number.POSITIVE_INFINITY) >= STOCKS_OF_ROOM * ratePerMs * leastMs
  return {
    ratePerMs,
    horizonMs: stocked ? Math.max(lease.horizonMs, leastMs) : lease.horizonMs,
    roundTripMs: lease.roundTripMs,
    spread: pacing.spread,
    ...(pacing.aheadHorizons !== undefined ? { aheadHorizons: pacing.aheadHorizons } : {}),
    ...(pacing.leastHorizonMs !== undefined
      ? { aheadHorizonMs: Math.max(lease.horizonMs, pacing.leastHorizonMs) }
      : {}),
    scarce,
    ...(lease.shortWaitMs !== undefined ? { waitMs: lease.shortWaitMs } : {}),
  }
}

/**
 * The lessor's last decision, or an empty one before the first.
 *
 * @param lease - the key's lease
 * @param nowMs - the time
 */
export function snapshotOf(lease: KeyLease, nowMs: number): Decision {
  return lease.snapshot ?? unheardDecision(lease.policy.limit, nowMs)
}

/**
 * The decision a lessee reports before its lessor has said anything of the key: allowed, with
 * nothing known to remain.
 *
 * @param limit - the key's limit
 * @param nowMs - the time
 */
export function unheardDecision(limit: number, nowMs: number): Decision {
  return { allowed: true, limit, remaining: 0, resetAtMs: nowMs, retryAfterMs: 0 }
}

/**
 * A denial while the lessor's word that the key is scarce holds.
 *
 * @param lease - the key's lease
 * @param nowMs - the time
 */
export function quietDecision(lease: KeyLease, nowMs: number): Decision {
  const snapshot = snapshotOf(lease, nowMs)
  return {
    ...snapshot,
    allowed: false,
    remaining: 0,
    retryAfterMs: Math.max(1, lease.quietUntilMs - nowMs, snapshot.retryAfterMs),
  }
}

/**
 * A root's lessee whose units of the window just ended lapsed at its start (and that holds
 * none for the new one) asks at its own point of the window's first moments, not at once:
 * every location's units lapse at the same instant, and hundreds of asks within milliseconds
 * overflow the root's queue.
 *
 * @param lease - the key's lease
 * @param nowMs - the time
 * @param spread - the book's point in a horizon
 */
export function spreadWindowStart(lease: KeyLease, nowMs: number, spread: number): void {
  // The window's start in the root's time, which lapsed lots end at; then by this clock.
  const rootMs = rootTimeOf(lease.clock, nowMs)
  const startMs = windowOf(lease.policy, rootMs)
  if (!lease.lapsed?.some((lot) => lot.validUntilMs === startMs)) return
  const spreadMs = Math.min(WINDOW_START_SPREAD_MS, lease.horizonMs / 2)
  lease.quietUntilMs = Math.max(lease.quietUntilMs, startMs - (rootMs - nowMs) + spread * spreadMs)
}

/**
 * Paces the key by its lessor's answer: how long it is short or scarce, and when to ask again.
 * A key slow enough to ask per request keeps no pace.
 *
 * @param lease - the key's lease, the answer's lots already added
 * @param reservation - the lessor's answer
 * @param nowMs - when it landed
 * @param pacing - the book's
 */
export function paceByAnswer(
  lease: KeyLease,
  reservation: Reservation,
  nowMs: number,
  pacing: Pacing
): void {
  if (asksOnDemand(demandOf(lease), reservation.horizonMs)) return
  lease.shortWaitMs = reservation.scarce ? reservation.refillInMs : undefined
  // As the location's own word: at saturation the next window begins short too, when every
  // isolate's units have just lapsed.
  if (reservation.rootShort)
    lease.rootShortUntilMs = rootShortUntil(lease, nowMs, reservation.horizonMs)
  // Once scarce, a key stays so for a while ({@link scarceUntil}): its lessee then asks once
  // per horizon, for what it spends until its next ask, whatever each answer says. The room
  // that keeps coming in is still there to collect, at the pace the lessor set.
  if (reservation.refillInMs !== undefined) {
    // A lessor that is itself short until its own next ask: come back then.
    if (reservation.scarce) lease.quietUntilMs = nowMs + reservation.refillInMs
  } else if (reservation.scarce)
    lease.scarceUntilMs = scarceUntil(lease, nowMs, reservation.horizonMs, pacing.scarceForWindow)
  if (nowMs < lease.scarceUntilMs && reservation.refillInMs === undefined)
    lease.quietUntilMs = nowMs + scarceWaitMs(reservation.horizonMs, pacing.spread)
}
