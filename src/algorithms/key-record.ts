/**
 * @module algorithms/key-record
 * What a key's object keeps across rule edits: a state per family (an algorithm and a period)
 * and the policies in use on the key lately, by tier. After a rules change, isolates run the
 * old and the new document side by side for their refresh interval plus KV's lag; calls under
 * both reach the key's object. Each call is then held to every version's policy for its tier
 * (the stricter binds), and a version whose family has no state yet starts from what the
 * others counted: an edit never sets a key's count back to zero. Pure.
 */
import { chargeKey, keyStateExpiresAtMs, pendingUnitsOf } from './index'
import type { KeyState } from './penalty'
import { isLeasable, isWindowed, MAX_LEASE_MS, windowOf } from './reserve'
import type { Outcome, Policy } from './types'
import type { Decision } from '../types'

/**
 * How long a policy counts as in use after its last call (ms): a rules refresh (60 s by default)
 * plus KV's lag (60 s). An isolate that holds an older document calls again within it, so the
 * stricter of two versions binds for as long as both are in use, and a loosening takes full
 * effect this long after the last call under the version before it.
 */
export const VERSION_OVERLAP_MS = 120_000

/** A policy's last use is noted again only once it is this old: not a write per call. */
const SEEN_REFRESH_MS = VERSION_OVERLAP_MS / 4

/** Policies remembered per key at most (tiers and versions together), the least recent dropped. */
const MAX_IN_USE = 16

/** One family's state: what an algorithm counts over a period, and the policy that wrote it. */
export interface FamilyState {
  algorithm: Policy['algorithm']
  periodMs: number
  state: KeyState
  /** The policy it was written under last (absent in records of earlier versions). */
  policy?: Policy
}

/** A policy in use on the key: a tier's policy under one version of its rule. */
export interface InUse {
  /** The tier's name, `''` for a request without one. */
  tier: string
  policy: Policy
  /** Its last call, within {@link SEEN_REFRESH_MS}. */
  seenAtMs: number
}

/** What a key's object keeps. */
export interface KeyRecord {
  /** A state per family, the one written last first. */
  families: readonly FamilyState[]
  /** The policies in use lately. */
  inUse: readonly InUse[]
}

/** One algorithm step on a key's state: a charge, or a gate (`gate.ts`). */
export type KeyStep = (
  key: KeyState | undefined,
  policy: Policy,
  nowMs: number,
  cost: number
) => Outcome<KeyState | undefined>

/**
 * Whether two policies are the same: every field alike, an absent one as `undefined`.
 *
 * @param a - a policy
 * @param b - another
 */
export function samePolicy(a: Policy, b: Policy): boolean {
  if (a === b) return true
  const x = a as unknown as Record<string, unknown>
  const y = b as unknown as Record<string, unknown>
  for (const key in x) if (x[key] !== y[key]) return false
  for (const key in y) if (!(key in x) && y[key] !== undefined) return false
  return true
}

/** Whether a family state counts under `policy` (its algorithm and period). */
function ofFamily(family: FamilyState, policy: Policy): boolean {
  return family.algorithm === policy.algorithm && family.periodMs === policy.periodMs
}

/**
 * Whether a record holds a state `policy` counts in (else its state is carried over).
 *
 * @param families - the record's family states
 * @param policy - a policy
 */
export function hasFamily(families: readonly FamilyState[], policy: Policy): boolean {
  return families.some((family) => ofFamily(family, policy))
}

/** The units a policy holds at most: its limit, or a bucket's burst. */
function capacityOf(policy: Policy): number {
  return 'burst' in policy ? policy.burst : policy.limit
}

/**
 * The state a policy whose family has none starts from: what `from` counted, placed at once
 * (up to the policy's capacity), and any penalty lock it holds. Units that an algorithm would
 * have let slide out over time count from now on instead: after an edit a key is never freer
 * than before it.
 *
 * A leased key's lessees may still hold units `from` granted them (and units it charged ahead
 * for its next window), to spend for up to {@link MAX_LEASE_MS}: those count too, and, when the
 * new policy's window ends sooner, in its next window as well (a bucket holds them that long).
 *
 * @param from - the family written last
 * @param to - the policy to count under
 * @param nowMs - the time
 * @param leased - whether the key's units are leased
 */
export function carryKey(
  from: FamilyState,
  to: Policy,
  nowMs: number,
  leased = false
): KeyState | undefined {
  const lock = from.state.blockedUntilMs
  const locked = lock !== undefined && lock > nowMs
  const carried = carriedUnits(from, to, nowMs, leased)
  if (!locked) return carried
  return carried ? { ...carried, blockedUntilMs: lock } : { blockedUntilMs: lock }
}

/** {@link carryKey}'s units: the state `to` starts with, or `undefined` for none. */
function carriedUnits(
  from: FamilyState,
  to: Policy,
  nowMs: number,
  leased: boolean
): KeyState | undefined {
  const old = from.policy
  // A record of an earlier version names no policy: nothing can be read of its count.
  if (!old) return undefined
  const used = Math.max(
    0,
    capacityOf(old) - chargeKey(from.state, old, nowMs, 0).decision.remaining
  )
  const held = leased && isLeasable(old)
  // What lessees may still spend of units charged for later: the next window, later in this one.
  const units = used + (held ? pendingUnitsOf(from.state, old, nowMs) : 0)
  const room = Math.max(0, chargeKey(undefined, to, nowMs, 0).decision.remaining)
  const now = Math.min(units, room)
  if (now <= 0) return undefined
  // A concurrency limit takes a slot a request, whatever its cost: a slot a unit.
  if (to.algorithm === 'concurrency') {
    let state: KeyState | undefined
    for (let i = 0; i < now; i++) state = chargeKey(state, to, nowMs, 1).state
    return state
  }
  if (!held || !isLeasable(to)) return chargeKey(undefined, to, nowMs, now).state
  if (!isWindowed(to))
    return chargeKey(undefined, to, nowMs, now, { untilMs: nowMs + MAX_LEASE_MS }).state
  const state = chargeKey(undefined, to, nowMs, now).state
  if (windowOf(to, nowMs) + to.periodMs >= nowMs + MAX_LEASE_MS) return state
  const ahead = chargeKey(state, to, nowMs, 0, AHEAD).decision.remaining
  return chargeKey(state, to, nowMs, Math.min(units, ahead), AHEAD).state ?? state
}

/** Charges the window after the current one. */
const AHEAD = { ahead: true } as const

/** A record with the call's policy noted as in use, and the policies it is held to. */
interface Noted {
  inUse: readonly InUse[]
  /** Whether `inUse` differs from the record's. */
  changed: boolean
  /** The policies of other versions for the call's tier, in use still. */
  others: Policy[]
}

/**
 * Notes a call's policy as in use, drops those unused for {@link VERSION_OVERLAP_MS}, and finds
 * the other versions' policies for its tier.
 *
 * @param inUse - the record's policies in use
 * @param policy - the call's
 * @param nowMs - the time
 */
export function noteInUse(inUse: readonly InUse[], policy: Policy, nowMs: number): Noted {
  const tier = policy.tier ?? ''
  let changed = false
  let own = false
  const others: Policy[] = []
  const kept: InUse[] = []
  for (const entry of inUse) {
    if (entry.tier === tier && samePolicy(entry.policy, policy)) {
      own = true
      if (nowMs - entry.seenAtMs >= SEEN_REFRESH_MS) {
        kept.push({ tier, policy: entry.policy, seenAtMs: nowMs })
        changed = true
      } else kept.push(entry)
    } else if (nowMs - entry.seenAtMs > VERSION_OVERLAP_MS) changed = true
    else {
      kept.push(entry)
      if (entry.tier === tier) others.push(entry.policy)
    }
  }
  if (!own) {
    kept.push({ tier, policy, seenAtMs: nowMs })
    changed = true
  }
  if (kept.length > MAX_IN_USE) {
    kept.sort((a, b) => b.seenAtMs - a.seenAtMs)
    kept.length = MAX_IN_USE
  }
  return { inUse: changed ? kept : inUse, changed, others }
}

/**
 * A key's state under `policy`: its family's, or, for a family without one, what the family
 * written last counted ({@link carryKey}); `undefined` for a key never seen.
 *
 * @param families - the record's family states
 * @param policy - the policy to count under
 * @param nowMs - the time
 * @param leased - whether the key's units are leased ({@link carryKey})
 */
export function familyState(
  families: readonly FamilyState[],
  policy: Policy,
  nowMs: number,
  leased: Leased = false
): KeyState | undefined {
  for (const family of families) if (ofFamily(family, policy)) return family.state
  const last = families[0]
  return last
    ? carryKey(last, policy, nowMs, typeof leased === 'function' ? leased() : leased)
    : undefined
}

/**
 * Whether a key's units are leased ({@link carryKey}), or how to find out: asked only when a
 * state is carried over, which most calls never need (finding out may cost the caller a read).
 */
export type Leased = boolean | (() => boolean)

/**
 * The record with `policy`'s family set to `state` (first, as written last), and only the
 * families some policy in use counts in.
 *
 * @param families - the record's family states
 * @param inUse - the policies in use
 * @param policy - the policy the state was written under
 * @param state - the state
 */
export function withFamily(
  families: readonly FamilyState[],
  inUse: readonly InUse[],
  policy: Policy,
  state: KeyState
): FamilyState[] {
  const written: FamilyState = {
    algorithm: policy.algorithm,
    periodMs: policy.periodMs,
    state,
    policy,
  }
  const kept = [written]
  for (const family of families)
    if (!ofFamily(family, policy) && inUse.some((entry) => ofFamily(family, entry.policy)))
      kept.push(family)
  return kept
}

/**
 * Runs a step (a charge, a gate) for one call on a key's record: under the call's policy, and
 * under every other version's policy in use for its tier, each on its family's state. The call
 * is allowed only if every one of them allows it; then each family keeps the state of its
 * strictest policy's step. Denied, the families of the policies that denied keep what their
 * step kept (a penalty lock, a counted denial) and the others are left as they were.
 *
 * @param record - the key's record (`undefined` for a key never seen)
 * @param policy - the call's policy
 * @param nowMs - the time
 * @param cost - units to take (0 to only look)
 * @param step - the algorithm step
 * @param leased - whether the key's units are leased ({@link carryKey})
 * @returns the record to keep (the very one passed in when nothing changed) and the decision
 */
export function decideOnRecord(
  record: KeyRecord | undefined,
  policy: Policy,
  nowMs: number,
  cost: number,
  step: KeyStep,
  leased: Leased = false
): { record: KeyRecord | undefined; decision: Decision } {
  const families = record?.families ?? []
  const noted = noteInUse(record?.inUse ?? [], policy, nowMs)
  const current = familyState(families, policy, nowMs, leased)
  const own = step(current, policy, nowMs, cost)
  if (noted.others.length === 0) {
    // One version in use: the common case, a step on one state.
    const stateChanged = own.state !== undefined && own.state !== current
    const seeded = current !== undefined && !hasFamily(families, policy)
    if (!stateChanged && !seeded && !noted.changed && record !== undefined)
      return { record, decision: own.decision }
    const state = own.state ?? current
    if (state === undefined) return { record, decision: own.decision }
    return {
      record: { families: withFamily(families, noted.inUse, policy, state), inUse: noted.inUse },
      decision: own.decision,
    }
  }
  return stricterOf(families, noted.inUse, policy, own, noted.others, nowMs, cost, step, leased)
}

/** {@link decideOnRecord} for a call held to other versions' policies too. */
function stricterOf(
  families: readonly FamilyState[],
  inUse: readonly InUse[],
  policy: Policy,
  own: Outcome<KeyState | undefined>,
  others: readonly Policy[],
  nowMs: number,
  cost: number,
  step: KeyStep,
  leased: Leased
): { record: KeyRecord; decision: Decision } {
  const stateOf = (each: Policy) => familyState(families, each, nowMs, leased)
  const steps = [
    { policy, outcome: own },
    ...others.map((other) => ({
      policy: other,
      outcome: step(stateOf(other), other, nowMs, cost),
    })),
  ]
  const allowed = steps.every(({ outcome }) => outcome.decision.allowed)
  // Per family, the state to keep: allowed, the strictest step's (a bucket's tokens capped by
  // the least burst), the call's own in a concurrency limit (the slot its lease names); denied,
  // a denying step's (its penalty lock, its counted denial), the others left as they were.
  const ownFamily = `${policy.algorithm}/${policy.periodMs}`
  const kept = new Map<string, { policy: Policy; state: KeyState; remaining: number }>()
  for (const { policy: each, outcome } of steps) {
    if (allowed !== outcome.decision.allowed) continue
    const state = outcome.state ?? stateOf(each)
    if (state === undefined) continue
    const id = `${each.algorithm}/${each.periodMs}`
    const had = kept.get(id)
    const keep =
      allowed && each.algorithm === 'concurrency' && id === ownFamily
        ? each === policy
        : !had || outcome.decision.remaining < had.remaining
    if (keep) kept.set(id, { policy: each, state, remaining: outcome.decision.remaining })
  }
  let next = families
  for (const [id, { policy: each, state }] of kept)
    if (id !== ownFamily) next = withFamily(next, inUse, each, state)
  // The call's family first, as written last: it is the one its next call reads.
  const ownKept = kept.get(ownFamily)
  if (ownKept) next = withFamily(next, inUse, ownKept.policy, ownKept.state)
  return { record: { families: next, inUse }, decision: combined(own.decision, steps, allowed) }
}

/** The call's decision, as strict as the strictest policy's (its limit the call's own). */
function combined(
  own: Decision,
  steps: readonly { outcome: Outcome<KeyState | undefined> }[],
  allowed: boolean
): Decision {
  const decisions = steps.map(({ outcome }) => outcome.decision)
  const resetAtMs = Math.max(...decisions.map((d) => d.resetAtMs))
  if (allowed) {
    const remaining = Math.min(...decisions.map((d) => d.remaining))
    return { ...own, remaining: Math.min(own.limit, remaining), resetAtMs }
  }
  let denial = own
  for (const decision of decisions)
    if (!decision.allowed && (denial.allowed || decision.retryAfterMs > denial.retryAfterMs))
      denial = decision
  return { ...denial, limit: own.limit, remaining: 0, resetAtMs }
}

/**
 * When a record may be deleted: when every family's state is equivalent to none. A family of
 * an earlier version's record (it names no policy) counts until `floorMs`, its stored expiry.
 *
 * @param families - the record's family states
 * @param floorMs - the least expiry (Unix ms)
 */
export function recordExpiresAtMs(families: readonly FamilyState[], floorMs = 0): number {
  let atMs = floorMs
  for (const family of families)
    if (family.policy) atMs = Math.max(atMs, keyStateExpiresAtMs(family.state, family.policy))
  return atMs
}
