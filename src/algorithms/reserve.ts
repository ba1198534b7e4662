/**
 * @module algorithms/reserve
 * Leased quotas, the object's side: a batch of units is charged at once (so the limit is never
 * exceeded) and spent later by an isolate, within the lease's validity.
 *
 * A unit charged in window w of a fixed or sliding window must be spent in w: spent in w + 1 it
 * would not be counted there. A token or a GCRA slot, once taken, may be spent at any time; the
 * lease still ends after {@link MAX_LEASE_MS} so that units do not sit unspent for long.
 */
import type { Decision } from '../types'
import { chargeKey } from './index'
import type { KeyState } from './penalty'
import { RAMP_SLOTS, rampStepMs, slotOffsetMs } from './sliding-window-ramp'
import type {
  FixedWindowPolicy,
  GcraPolicy,
  Hold,
  Policy,
  SlidingWindowPolicy,
  TokenBucketPolicy,
} from './types'

/** The policies whose units can be reserved in advance and handed back. */
export type LeasablePolicy =
  SlidingWindowPolicy | TokenBucketPolicy | FixedWindowPolicy | GcraPolicy

/** The algorithms a rule may run with `"consistency": "leased"`. */
export const LEASABLE_ALGORITHMS: readonly LeasablePolicy['algorithm'][] = [
  'sliding-window',
  'token-bucket',
  'fixed-window',
  'gcra',
]

/** The longest a lease lives, whatever the algorithm (ms). */
export const MAX_LEASE_MS = 10_000

/** A key with room for an ask grants at most this share of it: the rest stays for others. */
const SHARE = 0.5

/** Charges the window after the current one. */
const AHEAD = { ahead: true } as const

/**
 * Whether a policy's units can be leased.
 *
 * @param policy - any policy
 */
export function isLeasable(policy: Policy): policy is LeasablePolicy {
  return (LEASABLE_ALGORITHMS as readonly string[]).includes(policy.algorithm)
}

/** What a lessee asks for. */
export interface ReserveAsk {
  /** Units to spend from now on. */
  units: number
  /** The least of use now (a waiting request's cost), or 0 for a refill ahead of need. */
  minUnits: number
  /** Window algorithms: units to spend once the next window begins, charged to it now. */
  nextUnits?: number
  /**
   * The start of the window `nextUnits` are for, by the lessee's clock. An ask sent before a
   * window's end may arrive after it: those units are then the current window's.
   */
  nextWindowMs?: number
  /**
   * Sliding window: the next window's units only from its ramp, none at its start (the key is
   * short: what the next window's start took would be room the current one could still use).
   */
  rampOnly?: boolean
  /** Sliding window: at most this many of `nextUnits` on the next window's ramp. */
  rampUnits?: number
  /**
   * Sliding window: what the key lacks now of `units` may be charged for later in the current
   * window, at most this many units per step of the ramp's time, a fraction (see
   * {@link reserveLater}).
   */
  laterPerStep?: number
}

/** Units granted for the next window. */
export interface AheadGrant {
  granted: number
  /** The next window's start. */
  validFromMs: number
  validUntilMs: number
}

/** What a reservation did. */
export interface Reserved {
  /** The key state to store (the very object passed in when nothing was charged). */
  state: KeyState | undefined
  /** Units charged now, to be spent by the caller until `validUntilMs`; 0 when denied. */
  granted: number
  /** The decision after the grant; when nothing was granted, the denial (with its retry time). */
  decision: Decision
  /** When the granted units must be spent by (Unix ms). */
  validUntilMs: number
  /** Units charged ahead for the next window, if asked for and any were granted. */
  next?: AheadGrant
  /**
   * Sliding window: units charged on the next window's ramp, spendable from a little after it
   * begins (each its own grant, the earliest first), if any were granted.
   */
  ramp?: AheadGrant[]
  /**
   * Sliding window: units charged for later in the current window, while the key is short
   * (each its own grant, the earliest first), if any were granted.
   */
  later?: AheadGrant[]
  /** Whether the key had less room than was asked for: its lessees should not ask again soon. */
  scarce: boolean
}

/**
 * Charges up to `ask.units` at once: at most half of what the key has left when that covers
 * the ask (at least `minUnits`), and all of it when it does not (the key is then scarce). A
 * grant is either 0 or at least `minUnits`. When it is 0 and `minUnits`
 * is above 0 a request of `minUnits` is charged as the exact path would: denied, with its retry
 * time, and locked when the policy has a penalty. With `minUnits` 0 (a refill ahead of need)
 * nothing but the grant is charged. Window algorithms may also charge `ask.nextUnits` ahead for
 * the next window (granted the same way), spendable once it begins; bucket
 * algorithms hold what they grant until it must be spent (see `Hold`).
 *
 * @param key - the stored key state
 * @param policy - a leasable policy
 * @param nowMs - the current time
 * @param ask - what the lessee asks for
 */
export function reserveKey(
  key: KeyState | undefined,
  policy: LeasablePolicy,
  nowMs: number,
  ask: ReserveAsk
): Reserved {
  const { units, minUnits } = ask
  const validUntilMs = leaseEndMs(policy, nowMs)
  const hold = isWindowed(policy) ? undefined : { untilMs: validUntilMs }
  const look = chargeKey(key, policy, nowMs, 0).decision
  const room = look.allowed ? look.remaining : 0
  const want = grantOf(units, minUnits, room)
  let reserved: Reserved | undefined
  if (want > 0 && want >= minUnits) {
    const taken = chargeKey(key, policy, nowMs, want, hold)
    if (taken.decision.allowed)
      reserved = { ...taken, granted: want, validUntilMs, scarce: room < units }
  }
  if (!reserved && minUnits === 0)
    reserved = { state: key, granted: 0, decision: look, validUntilMs: nowMs, scarce: units > 0 }
  if (!reserved) {
    const denied = chargeKey(key, policy, nowMs, minUnits, hold)
    // `remaining` is whole units and the check below it exact: a cost that fits is granted.
    reserved = denied.decision.allowed
      ? { ...denied, granted: minUnits, validUntilMs, scarce: room < units }
      : { ...denied, granted: 0, validUntilMs: nowMs, scarce: true }
  }
  if (reserved.scarce && ask.laterPerStep && policy.algorithm === 'sliding-window')
    reserved = reserveLater(reserved, policy, nowMs, units - reserved.granted, ask.laterPerStep)
  if (!ask.nextUnits || !isWindowed(policy)) return reserved
  const windowMs = windowOf(policy, nowMs)
  const forMs = ask.nextWindowMs ?? windowMs + policy.periodMs
  // Units for a window that has begun by now are charged to it; for one that ended, not at all.
  if (forMs !== windowMs && forMs !== windowMs + policy.periodMs) return reserved
  const atStart =
    ask.rampOnly && policy.algorithm === 'sliding-window' && forMs > windowMs
      ? reserved
      : reserveFor(reserved, policy, nowMs, ask.nextUnits, forMs)
  const rest = Math.min(ask.nextUnits - (atStart.next?.granted ?? 0), ask.rampUnits ?? Infinity)
  if (rest <= 0 || policy.algorithm !== 'sliding-window' || forMs === windowMs) return atStart
  return reserveRamp(atStart, policy, nowMs, rest, forMs)
}

/**
 * Adds grants on the next window's ramp to a reservation: `units` spread evenly over its
 * slots, what a slot has no room for carried to the next, what the last has no room for not
 * granted. A key short of room has none at the next window's start; its ramp is the room that
 * comes back there as the current window slides out, handed out before it begins.
 */
function reserveRamp(
  reserved: Reserved,
  policy: SlidingWindowPolicy,
  nowMs: number,
  units: number,
  windowMs: number
): Reserved {
  if (rampStepMs(policy.periodMs) <= 0) return reserved
  const steps = Array.from({ length: RAMP_SLOTS }, (_, slot) => ({
    hold: { rampSlot: slot },
    validFromMs: windowMs + slotOffsetMs(slot, policy.periodMs),
    share: Math.floor(((slot + 1) * units) / RAMP_SLOTS) - Math.floor((slot * units) / RAMP_SLOTS),
  }))
  // One end for the whole ramp: its lots lapse, and go back, together. A ramp short of what
  // was asked says nothing of this window's room: not scarce for it.
  return chargeSteps(reserved, 'ramp', policy, nowMs, steps, units, leaseEndMs(policy, windowMs))
}

/**
 * Adds grants for later in the current window to a reservation of a key short of room: what
 * the ask lacks, at most `perStep` units a step of the ramp's time from the next one on
 * (a step without room carries its share to the next), for at most as many steps as a ramp
 * has, and none past the window's end. The room the previous window's sliding out gives back
 * then reaches the lessee before it is there, rather than a horizon after, at its next ask.
 */
function reserveLater(
  reserved: Reserved,
  policy: SlidingWindowPolicy,
  nowMs: number,
  units: number,
  perStep: number
): Reserved {
  const stepMs = rampStepMs(policy.periodMs)
  if (stepMs <= 0 || units <= 0) return reserved
  const windowMs = windowOf(policy, nowMs)
  const firstMs = windowMs + (Math.floor((nowMs - windowMs) / stepMs) + 1) * stepMs
  const count = Math.min(RAMP_SLOTS, Math.ceil((windowMs + policy.periodMs - firstMs) / stepMs))
  const steps = Array.from({ length: Math.max(0, count) }, (_, step) => {
    const fromMs = firstMs + step * stepMs
    // A fraction a step: whole units where the steps' running total crosses one.
    const share = Math.floor((step + 1) * perStep) - Math.floor(step * perStep)
    return { hold: { fromMs }, validFromMs: fromMs, share }
  })
  return chargeSteps(reserved, 'later', policy, nowMs, steps, units, leaseEndMs(policy, nowMs))
}

/** Units to charge ahead at one step: how they are held, when they may be spent, how many. */
interface AheadStep {
  hold: Hold
  validFromMs: number
  share: number
}

/**
 * Adds to a reservation, as its `field`, each step charged its share in turn within the room
 * it has (what a step has no room for carried to the next, `units` at most in all), each
 * spendable from its step's time until `validUntilMs`. The reservation as it was when no step
 * had room.
 */
function chargeSteps(
  reserved: Reserved,
  field: 'ramp' | 'later',
  policy: SlidingWindowPolicy,
  nowMs: number,
  steps: readonly AheadStep[],
  units: number,
  validUntilMs: number
): Reserved {
  let state = reserved.state
  const grants: AheadGrant[] = []
  let left = units
  let carried = 0
  for (const { hold, validFromMs, share: wanted } of steps) {
    if (left <= 0) break
    const share = Math.min(left, wanted)
    if (share + carried <= 0) continue
    const look = chargeKey(state, policy, nowMs, 0, hold).decision
    const want = Math.min(share + carried, left, look.allowed ? look.remaining : 0)
    carried += share - want
    if (want <= 0) continue
    const taken = chargeKey(state, policy, nowMs, want, hold)
    if (!taken.decision.allowed) continue
    state = taken.state
    left -= want
    grants.push({ granted: want, validFromMs, validUntilMs })
  }
  return grants.length === 0 ? reserved : { ...reserved, state, [field]: grants }
}

/** Adds a grant for a given window (the current one, or the next) to a reservation. */
function reserveFor(
  reserved: Reserved,
  policy: FixedWindowPolicy | SlidingWindowPolicy,
  nowMs: number,
  units: number,
  windowMs: number
): Reserved {
  const hold = windowMs > nowMs ? AHEAD : undefined
  const look = chargeKey(reserved.state, policy, nowMs, 0, hold).decision
  const room = look.allowed ? look.remaining : 0
  const want = grantOf(units, 0, room)
  const taken = want > 0 ? chargeKey(reserved.state, policy, nowMs, want, hold) : undefined
  if (!taken?.decision.allowed) return { ...reserved, scarce: true }
  return {
    ...reserved,
    state: taken.state,
    next: { granted: want, validFromMs: windowMs, validUntilMs: leaseEndMs(policy, windowMs) },
    scarce: reserved.scarce || room < units,
  }
}

/**
 * What to grant of an ask: a key with room for it gives at most half of that room (at least
 * the need), so others still find some; a key with less room than asked gives all it has, so
 * nothing is left unspendable while its lessees wait out their horizon.
 */
function grantOf(units: number, minUnits: number, room: number): number {
  return room < units ? room : Math.min(units, Math.max(minUnits, Math.ceil(room * SHARE)))
}

/** A bucket's tokens held by lessees fill at most this share of its burst at its full rate. */
const HOLD_SHARE = 0.9

/**
 * How long a bucket's granted tokens may be held: while held they count as still in the bucket
 * (it refills only to `burst` less them; its lessor cannot know when they are spent), so tokens
 * granted at the bucket's full rate over this time must fit in its burst: at most
 * {@link HOLD_SHARE} of the time the bucket takes to refill its burst, and at most
 * {@link MAX_LEASE_MS}.
 *
 * @param policy - a token bucket or GCRA policy
 */
export function bucketHoldMs(policy: TokenBucketPolicy | GcraPolicy): number {
  const refillMs = (policy.burst * policy.periodMs) / policy.limit
  return Math.max(1, Math.min(MAX_LEASE_MS, Math.floor(HOLD_SHARE * refillMs)))
}

/**
 * When units charged at `nowMs` must be spent by: the end of the current window for fixed and
 * sliding windows; for buckets, after {@link bucketHoldMs}; and at most {@link MAX_LEASE_MS}
 * later for every algorithm.
 *
 * @param policy - a leasable policy
 * @param nowMs - when the units were charged (for units charged ahead: their window's start)
 */
export function leaseEndMs(policy: LeasablePolicy, nowMs: number): number {
  return isWindowed(policy)
    ? Math.min(nowMs + MAX_LEASE_MS, windowOf(policy, nowMs) + policy.periodMs)
    : nowMs + bucketHoldMs(policy)
}

/** Whether the policy counts in epoch-aligned windows. */
export function isWindowed(
  policy: LeasablePolicy
): policy is FixedWindowPolicy | SlidingWindowPolicy {
  return policy.algorithm === 'fixed-window' || policy.algorithm === 'sliding-window'
}

/** The start of the window holding `atMs`. */
export function windowOf(policy: LeasablePolicy, atMs: number): number {
  return Math.floor(atMs / policy.periodMs) * policy.periodMs
}
