/**
 * @module algorithms/reserve-versions
 * Leased quotas while two versions of a rule are in use (`key-record.ts`): what a lessee is
 * granted must fit every version's policy for its tier, and is charged to each, so that no
 * version admits more than it allows whichever isolates spend the units. Pure.
 */
import { chargeKey } from './index'
import type { KeyState } from './penalty'
import {
  isLeasable,
  isWindowed,
  leaseEndMs,
  reserveKey,
  type LeasablePolicy,
  type Reserved,
  type ReserveAsk,
} from './reserve'
import type { Hold, Policy } from './types'

/** Another version's policy for the lessee's tier, and its family's state. */
export interface OtherVersion {
  policy: Policy
  state: KeyState | undefined
}

/**
 * Reserves under `policy` (its state `current`) units that also fit under each other version's
 * policy, and charges them to each. Only units to spend now are granted while versions overlap
 * (none ahead, on a ramp or for later: a unit charged ahead for one version's window is not in
 * another's), at most the least room any version has; while a version whose algorithm cannot
 * be leased is in use, only the need of the request waiting (spent as soon as it lands). What
 * the grant may be spent until is the soonest any version's lease of it ends. A request none
 * can be granted for is denied as the strictest version denies it, which keeps what that
 * denial keeps (a penalty lock).
 *
 * @param current - the key's state under `policy`
 * @param policy - the lessee's policy
 * @param others - the other versions in use for its tier
 * @param nowMs - the time
 * @param ask - what the lessee asks for
 * @returns the reservation (its state `policy`'s) and each other version's state after it
 */
export function reserveUnderVersions(
  current: KeyState | undefined,
  policy: LeasablePolicy,
  others: readonly OtherVersion[],
  nowMs: number,
  ask: ReserveAsk
): { reserved: Reserved; others: (KeyState | undefined)[] } {
  if (others.length === 0) return { reserved: reserveKey(current, policy, nowMs, ask), others: [] }
  const rooms = others.map(({ policy: other, state }) => {
    const look = chargeKey(state, other, nowMs, 0).decision
    return look.allowed ? look.remaining : 0
  })
  const room = Math.min(...rooms)
  if (room < ask.minUnits) {
    // Denied as the version with the least room denies it.
    const strictest = others[rooms.indexOf(room)]!
    const denied = chargeKey(strictest.state, strictest.policy, nowMs, ask.minUnits)
    return {
      reserved: {
        state: current,
        granted: 0,
        decision: { ...denied.decision, limit: policy.limit },
        validUntilMs: nowMs,
        scarce: true,
      },
      others: others.map(({ state }, i) => (others[i] === strictest ? denied.state : state)),
    }
  }
  const now = others.every(({ policy: other }) => isLeasable(other))
    ? Math.min(ask.units, room)
    : ask.minUnits
  const reserved = reserveKey(current, policy, nowMs, { units: now, minUnits: ask.minUnits })
  if (reserved.granted === 0)
    return {
      reserved: { ...reserved, scarce: reserved.scarce || now < ask.units },
      others: others.map(({ state }) => state),
    }
  let validUntilMs = reserved.validUntilMs
  for (const { policy: other } of others)
    if (isLeasable(other)) validUntilMs = Math.min(validUntilMs, leaseEndMs(other, nowMs))
  const charged = others.map(({ policy: other, state }) => {
    // A bucket's units are held until they must be spent, as its own grants are.
    const hold: Hold | undefined =
      isLeasable(other) && !isWindowed(other) ? { untilMs: validUntilMs } : undefined
    return chargeKey(state, other, nowMs, reserved.granted, hold).state ?? state
  })
  // Granted less than asked because another version has less room: the key is short, and its
  // lessees deny rather than queue for room that comes in at the rate.
  const scarce = reserved.scarce || now < ask.units
  return { reserved: { ...reserved, validUntilMs, scarce }, others: charged }
}
