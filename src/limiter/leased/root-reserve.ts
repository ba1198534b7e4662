/**
 * @module limiter/root-reserve
 * Leased quotas at a key's root object: what it charges for a lessee's ask (a location's or
 * regional object's), now and, near a window's end, for the next window, and how long it tells
 * the lessee its units should last, from how many lessees call. Pure but for the lessees it
 * notes: the key's record, the time and what the root knows of its lessees in; the record to
 * write and the reservation out. The object (`rate-limiter-object.ts`) reads, calls and writes.
 */
import { chargeKey, type KeyState } from '../../algorithms'
import { familyState, noteInUse, withFamily, type KeyRecord } from '../../algorithms/key-record'
import { handBackKey } from '../../algorithms/refund'
import { isWindowed, type LeasablePolicy } from '../../algorithms/reserve'
import { reserveUnderVersions } from '../../algorithms/reserve-versions'
import {
  batchCap,
  horizonFor,
  pacingFor,
  rampShare,
  ROOT_PACING,
  SCARCE_ROOT_PACING,
  stepShare,
} from './lease-sizing'
import type { Lessees } from './lessees'
import type { LesseeAsk, Reservation } from './reservation'

/**
 * A starting lessee (a location's or regional object in the second after it opened for a
 * deploy) is granted up to this many times its ask while the key keeps at least half its room,
 * and keeps it while it is starting. Its first ask is sized before its lessees measured their
 * demand, and before it heard the root's horizon. Granted only its ask, it called again as soon
 * as its lessees took their next batches: two or three calls per location in a deploy's first
 * second (at S 1.1, 626 calls then with twice the ask, 367 with four times it, without the
 * regional tier). With it, a regional object granted four times its ask ran out while its
 * locations filled their first stocks, and their isolates waited for its second round trip to
 * the root: a deploy's p99.9 wait 321 ms with four times, 286 ms with eight, and no lower with
 * more (`npm run simulate:scale -- --demand 1.1 --seconds 20 --warmup 0`). What a lessee does
 * not spend it hands back once it is no longer starting. Not for a bucket: the tokens the
 * tiers hold count as taken from its burst until reported spent.
 */
const STARTING_GRANT = 8

/** What a key's root knows besides its record when a lessee asks. */
export interface RootLessor {
  /** The lessees it heard from lately (this one noted with its ask). */
  lessees: Lessees
  /** Until when it charges a sliding window nothing ahead (short of room lately). */
  scarceUntilMs: number
  /** The key's lease epoch: the one stored, or the one the key gets with this reservation. */
  epoch: string
}

/** What a root's reservation changes, and the reservation. */
export interface RootReserved {
  /** The key's record to write, when it changed. */
  record: KeyRecord | undefined
  /** Until when the root counts the key as short of room now. */
  scarceUntilMs: number
  /** The answer to the lessee. */
  reservation: Reservation
}

/**
 * Charges units for a lessee to spend later (and, near a window's end, units for the next
 * window), from the key's record after what the ask hands back of this epoch; under every
 * version of the rule in use. Tells the lessee how long its units should last, from how many
 * lessees call and how short the key is.
 *
 * @param record - the key's record, if it has one
 * @param policy - a leasable limit
 * @param ask - the units wanted (now, at least, and for the next window) and who asks
 * @param nowMs - the root's time (Unix ms)
 * @param root - its lessees (the one asking is noted), scarcity and lease epoch
 */
export function reserveAtRoot(
  record: KeyRecord | undefined,
  policy: LeasablePolicy,
  ask: LesseeAsk,
  nowMs: number,
  root: RootLessor
): RootReserved {
  const { lessees, scarceUntilMs, epoch } = root
  lessees.note(ask.lessee, nowMs, ask.ratePerMs)
  const families = record?.families ?? []
  const noted = noteInUse(record?.inUse ?? [], policy, nowMs)
  const stored = familyState(families, policy, nowMs, true)
  let current = stored
  // What the ask hands back, of this epoch only: a reset since dropped what was charged before.
  const handBacks = [['refund', ask.returned] as const, ['spent', ask.spent] as const]
  for (const [how, lots] of handBacks)
    for (const lot of lots ?? [])
      if (lot.epoch === epoch) current = handBackKey(how, current, policy, nowMs, lot.units, lot)
  // While a sliding window has less room than is asked of it, nothing is charged at the next
  // window's start, only on its ramp: what the start took would be room this one could still
  // use as its previous slides out. (A fixed window's next count is its own: asks ahead take
  // nothing from the current one.)
  // Only an ask ahead of a sliding window can reach its ramp: the lessees' demand is summed
  // for it alone.
  const rampUnits =
    ask.nextUnits && policy.algorithm === 'sliding-window'
      ? rampShare(policy, ask.ratePerMs, lessees.ratePerMs(nowMs))
      : undefined
  // While the key is short, what a lessee lacks now it may be granted for later in this
  // window, its share of each step's room: the lessees' demand is summed for that too.
  const laterPerStep =
    nowMs < scarceUntilMs && policy.algorithm === 'sliding-window'
      ? stepShare(policy, ask.ratePerMs, lessees.ratePerMs(nowMs))
      : undefined
  const shared = {
    ...startingAsk(current, policy, nowMs, ask),
    ...(rampUnits === undefined ? {} : { rampUnits }),
    ...(laterPerStep === undefined ? {} : { laterPerStep }),
  }
  const ahead =
    nowMs >= scarceUntilMs || policy.algorithm !== 'sliding-window'
      ? shared
      : { ...shared, rampOnly: true }
  // Another version of the rule in use: what is granted fits it too, and is charged to it.
  const others = noted.others.map((other) => ({
    policy: other,
    state: familyState(families, other, nowMs, true),
  }))
  const { reserved, others: charged } = reserveUnderVersions(current, policy, others, nowMs, ahead)
  let kept = families
  charged.forEach((state, i) => {
    if (state !== undefined && state !== others[i]!.state)
      kept = withFamily(kept, noted.inUse, others[i]!.policy, state)
  })
  const state = reserved.state ?? current
  if (state !== undefined && (state !== stored || kept !== families || noted.changed))
    kept = withFamily(kept, noted.inUse, policy, state)
  // Paced as short of room from the answer that finds it so: its lessee waits that horizon.
  const short = ask.units > 0 && reserved.granted < ask.units
  const pacing =
    short || nowMs < scarceUntilMs ? SCARCE_ROOT_PACING : pacingFor(ROOT_PACING, reserved.decision)
  const horizonMs = horizonFor(lessees.count(nowMs), pacing, policy.periodMs)
  const { granted, decision, validUntilMs, next, ramp, later, scarce } = reserved
  return {
    record: kept !== families ? { families: kept, inUse: noted.inUse } : undefined,
    scarceUntilMs: short ? nowMs + horizonMs : scarceUntilMs,
    reservation: {
      granted,
      decision,
      chargedAtMs: nowMs,
      validUntilMs,
      epoch,
      ...(next ? { next: { ...next, epoch } } : {}),
      ...(ramp ? { ramp: ramp.map((grant) => ({ ...grant, epoch })) } : {}),
      ...(later ? { later: later.map((grant) => ({ ...grant, epoch })) } : {}),
      horizonMs,
      scarce,
    },
  }
}

/** The ask to reserve: a starting lessee's grown by {@link STARTING_GRANT} while the key is roomy. */
function startingAsk(
  current: KeyState | undefined,
  policy: LeasablePolicy,
  nowMs: number,
  ask: LesseeAsk
): LesseeAsk {
  if (!ask.starting || ask.units === 0 || !isWindowed(policy)) return ask
  const units = Math.min(batchCap(policy), STARTING_GRANT * ask.units)
  // A look at the room, as `reserveKey` takes one: a charge of nothing.
  const { decision } = chargeKey(current, policy, nowMs, 0)
  return 2 * (decision.remaining - units) >= decision.limit ? { ...ask, units } : ask
}
