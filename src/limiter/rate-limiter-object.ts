/**
 * @module limiter/rate-limiter-object
 * The Durable Object that holds one limit key's state. A thin shell around `algorithms/`:
 * it knows nothing about rules; the policy arrives with every call.
 */
import { DurableObject } from 'cloudflare:workers'
import {
  chargeKey,
  nextLeaseExpiryMs,
  releaseLease,
  type ConcurrencyPolicy,
  type ConcurrencyState,
  type Policy,
  withMoreIn,
} from '../algorithms'
import { gateKey } from '../algorithms/gate'
import {
  decideOnRecord,
  familyState,
  recordExpiresAtMs,
  withFamily,
  type FamilyState,
  type InUse,
  type KeyRecord,
  type KeyStep,
} from '../algorithms/key-record'
import { handBackKey } from '../algorithms/refund'
import type { LeasablePolicy } from '../algorithms/reserve'
import type { LotSpan } from '../algorithms/types'
import type { Decision } from '../types'
import { alarmJitterMs } from './alarm-jitter'
import type { LeaseKey, Lot } from './leased/key-lease'
import { Lessees } from './leased/lessees'
import { LocationLessor } from './leased/location-lessor'
import type { ObjectNamespace } from './calls/object-name'
import type { Lessor, LesseeAsk, Reservation } from './leased/reservation'
import { reserveAtRoot } from './leased/root-reserve'

/**
 * The stored record (`algorithms/key-record.ts`): the state of the family written last (an
 * algorithm and a period) and the policy it was written under, the states of the other families
 * in use while a rule edit propagates, and the policies in use on the key lately. Records of
 * earlier versions hold the first alone, without its policy.
 */
interface StoredState extends FamilyState {
  /** The other families' states, while some policy in use counts in them. */
  others?: FamilyState[]
  /** The policies in use on the key lately, by tier and version. */
  inUse?: InUse[]
  /** When every state is equivalent to none (Unix ms). */
  expiresAtMs: number
  /**
   * The cleanup alarm armed when this was written: an instance created after an eviction then
   * knows its alarm is set and writes none. Absent in records of older versions.
   */
  alarmAtMs?: number
}

/** One request of a batch: what `charge` takes. */
export interface BatchItem {
  policy: Policy
  cost: number
}

const STATE_KEY = 'state'

/**
 * The method an object reads its clock through (Unix ms). A symbol, not a name: RPC reaches
 * only named methods. A simulation gives each object a clock of its own by overriding it
 * (`tools/scale`: machines whose clocks are off); in production it is `Date.now()`, frozen
 * while code runs.
 */
export const OBJECT_CLOCK: unique symbol = Symbol('object clock')
/** Names the key's state for leases: a reset (or an idle delete) starts a new one. */
const EPOCH_KEY = 'lease-epoch'

/**
 * One instance per limit key (rule id + key values). Reads its state synchronously, runs the
 * algorithm, writes, and arms an alarm that deletes the state once the key has gone idle.
 */
export class RateLimiterObject extends DurableObject implements Lessor {
  /** The alarm this instance has armed, if it knows of one. */
  #alarmAtMs: number | undefined
  /**
   * The stored record as this instance last read or wrote it (`null`: none; `undefined`: not
   * read yet). Storage changes only through this instance, so the copy saves a read and a
   * deserialisation per call.
   */
  #record: StoredState | null | undefined
  /** The same as the algorithms read it (`null`: none), made once per read or write. */
  #keyRecord: KeyRecord | null = null
  /** The lease epoch as stored (`null`: not read yet; `undefined`: none). */
  #epochKnown: string | undefined | null = null
  /** Requests waiting for a concurrency slot, first come first served. */
  #waiters: (() => void)[] = []
  /** The lessees of a root object (leased quotas), for their pacing. */
  readonly #lessees = new Lessees()
  /** Until when a root object charges a sliding window nothing ahead (short of room lately). */
  #scarceUntilMs = 0
  /** What this object does as a key's object in one location (leased quotas), once asked. */
  #location: LocationLessor | undefined

  /**
   * Takes `cost` units under `policy` and reports the decision.
   *
   * @param policy - the limit to apply
   * @param cost - units to take; 0 only looks
   */
  charge(policy: Policy, cost: number): Decision {
    return this.#decide(policy, cost, chargeKey)
  }

  /**
   * Whether a request of `cost` fits, charging only a refusal (see `algorithms/gate.ts`): the
   * check a rule counting responses makes before the origin.
   *
   * @param policy - the limit to apply
   * @param cost - units the request would take
   */
  gate(policy: Policy, cost: number): Decision {
    return this.#decide(policy, cost, gateKey)
  }

  /**
   * Runs `step` (an algorithm step) on the key's record now, under the call's policy and any
   * other version of it still in use, and writes what changed.
   */
  #decide(policy: Policy, cost: number, step: KeyStep): Decision {
    // One clock read per call: in production Date.now() is frozen while this runs anyway.
    const nowMs = this[OBJECT_CLOCK]()
    // No await between the read and the write: the input gate makes this atomic per key.
    const record = this.#read()
    const decided = decideOnRecord(record, policy, nowMs, cost, step, this.#leased)
    if (decided.record && decided.record !== record) this.#write(decided.record)
    return moreIn(decided, policy, nowMs)
  }

  /**
   * Leased quotas, as the key's root object: charges units for a lessee (a location's object)
   * to spend later, and, near a window's end, units for the next window. Tells the lessee how
   * long its units should last, from how many lessees call.
   *
   * @param policy - a leasable limit
   * @param ask - the units wanted (now, at least, and for the next window) and who asks
   */
  reserve(policy: LeasablePolicy, ask: LesseeAsk): Reservation {
    const nowMs = this[OBJECT_CLOCK]()
    // No await between the read and the write: the input gate makes this atomic per key.
    const stored = this.#epoch()
    // A key's first reservation gives it its epoch, minted now: no lot handed back with this ask
    // can carry it.
    const epoch = stored ?? crypto.randomUUID()
    const reserved = reserveAtRoot(this.#read(), policy, ask, nowMs, {
      lessees: this.#lessees,
      scarceUntilMs: this.#scarceUntilMs,
      epoch,
    })
    if (reserved.record) this.#write(reserved.record)
    this.#scarceUntilMs = reserved.scarceUntilMs
    if (stored === undefined) {
      this.ctx.storage.kv.put(EPOCH_KEY, epoch)
      this.#epochKnown = epoch
    }
    return reserved.reservation
  }

  /**
   * Hands back reserved units that were not spent, where the algorithm allows.
   *
   * @param policy - the limit they were reserved under
   * @param units - unspent units
   * @param lot - when they were to be spent, as granted
   * @param epoch - from the reservation
   */
  refund(policy: LeasablePolicy, units: number, lot: LotSpan, epoch: string): void {
    if (this.#epoch() !== epoch) return
    // Back to the family they were charged in only: other versions keep counting them.
    const record = this.#read()
    if (!record) return
    const nowMs = this[OBJECT_CLOCK]()
    const current = familyState(record.families, policy, nowMs)
    const next = handBackKey('refund', current, policy, nowMs, units, lot)
    if (next !== undefined && next !== current)
      this.#write({
        families: withFamily(record.families, record.inUse, policy, next),
        inUse: record.inUse,
      })
  }

  /**
   * Leased quotas, as a key's object in one location: grants an isolate units from what this
   * object holds of the key (see `location-lessor.ts`).
   *
   * @param lease - the key (its rule, placement and limit key)
   * @param policy - its limit
   * @param ask - the isolate's ask
   */
  async sublease(lease: LeaseKey, policy: LeasablePolicy, ask: LesseeAsk): Promise<Reservation> {
    return this.#lessor().serve(this.#rootNamespace(), lease, policy, ask)
  }

  /**
   * Takes back units an isolate of this location did not spend.
   *
   * @param lease - the key
   * @param policy - its limit
   * @param lot - the units
   */
  subrefund(lease: LeaseKey, policy: LeasablePolicy, lot: Lot): void {
    this.#lessor().takeBack(this.#rootNamespace(), lease, policy, lot)
  }

  /**
   * Drops what this location's object holds of a key an admin reset: those units were charged in
   * the state the reset wiped.
   *
   * @param lease - the key
   */
  subforget(lease: LeaseKey): void {
    this.#location?.forget(lease)
  }

  #lessor(): LocationLessor {
    return (this.#location ??= new LocationLessor(this.#name(), {
      now: () => this[OBJECT_CLOCK](),
    }))
  }

  /** This object's clock (Unix ms): see {@link OBJECT_CLOCK}. */
  [OBJECT_CLOCK](): number {
    return Date.now()
  }

  /**
   * The namespace of the key's root object: this class's own, through the Worker's exports
   * (`ctx.exports`), or the `LIMITER` binding.
   */
  #rootNamespace(): ObjectNamespace {
    const exported = (this.ctx as { exports?: { RateLimiterObject?: ObjectNamespace } }).exports
    const namespace =
      exported?.RateLimiterObject ?? (this.env as { LIMITER?: ObjectNamespace }).LIMITER
    if (!namespace)
      throw new Error('leased quotas need RateLimiterObject exported, or bound as LIMITER')
    return namespace
  }

  /**
   * Decides several requests for this key in order, in one synchronous run (atomic per key, as
   * `charge` is), with one write at the end: what the client's coalescing sends when requests
   * for one key queued behind a call in flight. Each item carries its own policy (tiers).
   *
   * @param items - the requests, in arrival order
   * @returns one decision per item, in the same order
   */
  chargeBatch(items: readonly BatchItem[]): Decision[] {
    const nowMs = this[OBJECT_CLOCK]()
    const record = this.#read()
    let held = record
    const decisions = items.map(({ policy, cost }) => {
      const decided = decideOnRecord(held, policy, nowMs, cost, chargeKey, this.#leased)
      held = decided.record
      return moreIn(decided, policy, nowMs)
    })
    if (held && held !== record) this.#write(held)
    return decisions
  }

  /**
   * Takes a concurrency slot, waiting in the queue (FIFO, at most `queue` waiters, at most
   * `maxWaitMs`) when none is free. Resolves the decision; `timedOut` when the wait ran out.
   *
   * @param policy - the concurrency limit
   */
  async acquire(policy: ConcurrencyPolicy): Promise<Decision> {
    const deadline = this[OBJECT_CLOCK]() + policy.maxWaitMs
    let decision = this.charge(policy, 1)
    if (decision.allowed || this.#waiters.length >= policy.queue) return decision
    for (;;) {
      const left = deadline - this[OBJECT_CLOCK]()
      if (left <= 0) return { ...decision, timedOut: true }
      // Woken by a release, or at the earliest lease expiry (a Worker that died), or at the
      // deadline: not at the estimate in `retryAfterMs`, which would cost the waiter its place.
      const wakeMs = Math.min(left, Math.max(decision.retryAfterMs, this.#slotFreeInMs(policy)))
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer)
          const at = this.#waiters.indexOf(done)
          if (at >= 0) this.#waiters.splice(at, 1)
          resolve()
        }
        const timer = setTimeout(done, wakeMs)
        this.#waiters.push(done)
      })
      decision = this.charge(policy, 1)
      if (decision.allowed) return decision
    }
  }

  /**
   * Frees a concurrency slot and wakes the first waiter.
   *
   * @param policy - the concurrency limit the lease was taken under
   * @param leaseId - from the acquiring decision
   */
  release(policy: ConcurrencyPolicy, leaseId: string): void {
    const record = this.#read()
    const nowMs = this[OBJECT_CLOCK]()
    const current = record && familyState(record.families, policy, nowMs)
    if (record && current?.state)
      this.#write({
        families: withFamily(record.families, record.inUse, policy, {
          ...current,
          state: releaseLease(current.state as ConcurrencyState, leaseId, policy, nowMs),
        }),
        inUse: record.inUse,
      })
    this.#waiters.shift()?.()
  }

  /** Ms until the first held slot's lease runs out (0 when none is held). */
  #slotFreeInMs(policy: ConcurrencyPolicy): number {
    const nowMs = this[OBJECT_CLOCK]()
    const record = this.#read()
    const state = record && familyState(record.families, policy, nowMs)?.state
    return Math.max(
      0,
      (nextLeaseExpiryMs(state as ConcurrencyState | undefined, nowMs) ?? nowMs) - nowMs
    )
  }

  /**
   * Whether a state carried over from another family must count units lessees may hold: the
   * key has served reservations (it has a lease epoch). Asked only when a family has no state
   * and another's is carried over, so an object back from an eviction reads no epoch to charge.
   */
  readonly #leased = (): boolean => this.#epoch() !== undefined

  /** The key's lease epoch, if it has served reservations (read once, then kept). */
  #epoch(): string | undefined {
    if (this.#epochKnown === null) this.#epochKnown = this.ctx.storage.kv.get<string>(EPOCH_KEY)
    return this.#epochKnown
  }

  /** The key's record, as the algorithms read it; `undefined` for a key with none. */
  #read(): KeyRecord | undefined {
    if (this.#record === undefined) {
      this.#record = this.ctx.storage.kv.get<StoredState>(STATE_KEY) ?? null
      this.#alarmAtMs ??= this.#record?.alarmAtMs
      this.#keyRecord = this.#record && keyRecordOf(this.#record)
    }
    return this.#keyRecord ?? undefined
  }

  #write(record: KeyRecord): void {
    const [written, ...others] = record.families as [FamilyState, ...FamilyState[]]
    // A family of an earlier version's record (no policy) counts until its stored expiry.
    const floorMs = record.families.some((family) => !family.policy)
      ? (this.#record?.expiresAtMs ?? 0)
      : 0
    const expiresAtMs = recordExpiresAtMs(record.families, floorMs)
    const stored: StoredState = {
      ...written,
      ...(others.length > 0 ? { others } : {}),
      inUse: [...record.inUse],
      expiresAtMs,
      alarmAtMs: this.#armAlarm(expiresAtMs, written.periodMs),
    }
    this.ctx.storage.kv.put<StoredState>(STATE_KEY, stored)
    this.#record = stored
    this.#keyRecord = record
  }

  /** Forgets the key's state. */
  reset(): void {
    void this.ctx.storage.deleteAll()
    this.#record = null
    this.#keyRecord = null
    this.#epochKnown = undefined
    this.#alarmAtMs = undefined
  }

  /**
   * Deletes the state if the key is idle; otherwise re-arms for when it will be. An idle key
   * costs one row read and one row delete: its alarm was consumed by running, and the empty
   * table that stays holds no data (`reset()` is what drops the whole database).
   */
  override alarm(): void {
    this.#alarmAtMs = undefined
    // Read, not the copy: the alarm may be this instance's first event after an eviction.
    const stored = this.ctx.storage.kv.get<StoredState>(STATE_KEY)
    if (!stored) {
      this.#record = null
      this.#keyRecord = null
      return
    }
    if (this[OBJECT_CLOCK]() >= stored.expiresAtMs) {
      this.ctx.storage.kv.delete(STATE_KEY)
      // A leased key's epoch goes with its state: a late refund then finds none and is ignored.
      if (this.#epoch() !== undefined) this.ctx.storage.kv.delete(EPOCH_KEY)
      this.#epochKnown = undefined
      this.#record = null
      this.#keyRecord = null
      return
    }
    // Re-armed, and written down, so that an instance created after an eviction knows it.
    const record = { ...stored, alarmAtMs: this.#armAlarm(stored.expiresAtMs, stored.periodMs) }
    this.ctx.storage.kv.put<StoredState>(STATE_KEY, record)
    this.#record = record
    this.#keyRecord = keyRecordOf(record)
  }

  /**
   * Arms the alarm only when none is known: a busy key then costs one alarm write per idle
   * period instead of one per request. An alarm that fires early finds the newer expiry in
   * storage and re-arms. The alarm goes off a little after the expiry, by an offset fixed for
   * each key ({@link alarmJitterMs}), so keys created together do not all clean up at once.
   *
   * @returns the alarm armed now (Unix ms)
   */
  #armAlarm(expiresAtMs: number, periodMs: number): number {
    // State that is already idle (e.g. every slot released) is deleted by an alarm right away.
    const atMs = Math.max(
      expiresAtMs + alarmJitterMs(this.#name(), periodMs),
      this[OBJECT_CLOCK]() + 1
    )
    if (this.#alarmAtMs !== undefined && this.#alarmAtMs <= atMs) return this.#alarmAtMs
    this.#alarmAtMs = atMs
    void this.ctx.storage.setAlarm(atMs)
    return atMs
  }

  #name(): string {
    return this.ctx.id.name ?? this.ctx.id.toString()
  }
}

/** A stored record as the algorithms read it. */
function keyRecordOf(stored: StoredState): KeyRecord {
  const { others, inUse, expiresAtMs: _expires, alarmAtMs: _alarm, ...written } = stored
  return { families: others ? [written, ...others] : [written], inUse: inUse ?? [] }
}

/**
 * A decision with when more units come ({@link withMoreIn}), read in the state the call's
 * policy counts in after it.
 */
function moreIn(
  decided: { record: KeyRecord | undefined; decision: Decision },
  policy: Policy,
  nowMs: number
): Decision {
  const state = decided.record && familyState(decided.record.families, policy, nowMs)
  return withMoreIn(decided.decision, state, policy, nowMs)
}
