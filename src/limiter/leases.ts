/**
 * @module limiter/leases
 * Leased quotas (`"consistency": "leased"`): an isolate reserves a batch of a hot key's units
 * from its object, which charges them at once, and spends them locally without a call. It
 * refills ahead of need in the background, and hands back what it did not spend.
 *
 * Admissions never exceed the limit: every unit spent was charged first. The cost is early
 * denials: with N isolates each holding at most B units ({@link batchCap}), a request is denied
 * only once at least limit − (N − 1)·B units were admitted in its window.
 */
import { isLeasable, type LeasablePolicy } from '../algorithms/reserve'
import type { ChargeCall, ChargeResult, LimiterNamespace } from './charge-call'
import {
  allowedFrom,
  joinsLot,
  leaseId,
  measureRate,
  type KeyLease,
  type Outcome,
  type Pending,
} from './key-lease'
import {
  failedCharge,
  keepAliveInRequest,
  refundUnits,
  reserveUnits,
  type LeaseCallContext,
} from './lease-calls'
import { batchSize, samePolicy, worthRefunding } from './lease-sizing'
import type { Reservation } from './rate-limiter-object'
import { unavailableOf } from './rpc'
import { clientStats, type ClientStats } from './stats'

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
}

/**
 * One isolate's leases: per key, the units it holds, until when, and the object's last
 * decision. One per isolate ({@link isolateLeases}); tests make several, standing in for
 * isolates.
 */
export class LeaseBook {
  readonly #leases = new Map<string, KeyLease>()
  readonly #now: () => number
  readonly #keepAlive: (promise: Promise<unknown>) => void
  readonly #stats: () => ClientStats
  readonly #background = new Set<Promise<unknown>>()
  #lastSweepMs = 0

  /** @param options - clock, keep-alive and stats (defaults for production) */
  constructor(options: LeaseBookOptions = {}) {
    this.#now = options.now ?? (() => Date.now())
    this.#keepAlive = options.keepAlive ?? keepAliveInRequest
    const stats = options.stats
    this.#stats = stats ? () => stats : clientStats
  }

  /**
   * Decides a request under a leased rule: from the units held when they cover its cost
   * (`local`), otherwise after one reservation (`durableObject`), which denies with the
   * object's retry time when it grants nothing. Failures follow the call's fail mode.
   *
   * @param namespace - the `LIMITER` binding
   * @param call - a check whose policy is leasable
   * @param timeoutMs - the longest wait for a reservation
   * @throws {LimiterUnavailableError} when the key fails closed
   */
  async charge(
    namespace: LimiterNamespace,
    call: ChargeCall,
    timeoutMs: number
  ): Promise<ChargeResult> {
    const { policy, cost } = call
    if (!isLeasable(policy)) throw new Error(`${policy.algorithm} cannot be leased`)
    const to: LeaseCallContext = { namespace, stats: this.#stats(), timeoutMs }
    this.#sweep(this.#now())
    let waited = false
    for (;;) {
      const nowMs = this.#now()
      const lease = this.#touch(to, call, policy, nowMs)
      if (lease.lot && nowMs >= lease.lot.validUntilMs) this.#giveBack(lease, nowMs)
      const held = lease.lot?.units ?? 0
      if (held >= cost) {
        lease.lot!.units -= cost
        lease.spentSinceReserve += cost
        to.stats.decided(call.rule.id, waited ? 'durableObject' : 'local')
        this.#refillAhead(lease, nowMs)
        return { enforced: true, decision: allowedFrom(lease.snapshot!, lease.lot!.units) }
      }
      const stale = lease.pending && nowMs - lease.pending.sinceMs > 2 * timeoutMs
      const pending =
        lease.pending && !stale
          ? lease.pending
          : this.#reserve(lease, nowMs, cost - held + lease.waiting, cost - held)
      waited = true
      lease.waiting += cost
      const outcome = await pending.promise
      lease.waiting -= cost
      if (!outcome.ok) return failedCharge(to.stats, call, outcome.error)
      const { granted, decision } = outcome.reservation
      // Denied for a cost no greater than this one: so is this request.
      if (granted === 0 && pending.minUnits > 0 && pending.minUnits <= cost) {
        to.stats.decided(call.rule.id, 'durableObject')
        return { enforced: true, decision }
      }
    }
  }

  /**
   * Drops a key's lease without handing its units back (the key was reset: they are gone).
   *
   * @param ruleId - the rule
   * @param key - the limit key
   */
  forget(ruleId: string, key: string): void {
    this.#leases.delete(leaseId(ruleId, key))
  }

  /**
   * Hands a key's unspent units back now and drops its lease: its last user here is done with
   * it. A reservation still in flight for it hands its grant back when it lands.
   *
   * @param ruleId - the rule
   * @param key - the limit key
   */
  release(ruleId: string, key: string): void {
    const id = leaseId(ruleId, key)
    const lease = this.#leases.get(id)
    if (!lease) return
    this.#leases.delete(id)
    this.#giveBack(lease, this.#now())
  }

  /** Hands every unspent unit back now, and waits for it and every background call. */
  async flush(): Promise<void> {
    await this.settled()
    const nowMs = this.#now()
    for (const lease of this.#leases.values()) this.#giveBack(lease, nowMs)
    await this.settled()
  }

  /** Waits for every background call (refills, refunds) started so far. */
  async settled(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background])
  }

  /** The key's lease, made or remade when its policy changed; marked most recently used. */
  #touch(to: LeaseCallContext, call: ChargeCall, policy: LeasablePolicy, nowMs: number): KeyLease {
    const id = leaseId(call.rule.id, call.key)
    let lease = this.#leases.get(id)
    if (lease) this.#leases.delete(id)
    if (lease && !samePolicy(lease.policy, policy)) {
      this.#giveBack(lease, nowMs)
      lease = undefined
    }
    lease ??= {
      ruleId: call.rule.id,
      ...(call.rule.placement ? { placement: call.rule.placement } : {}),
      key: call.key,
      policy,
      to,
      spentSinceReserve: 0,
      lastUsedMs: nowMs,
      waiting: 0,
    }
    lease.lastUsedMs = nowMs
    this.#leases.set(id, lease)
    if (this.#leases.size > MAX_KEYS) {
      const [oldestId, oldest] = this.#leases.entries().next().value!
      this.#leases.delete(oldestId)
      this.#giveBack(oldest, nowMs)
    }
    return lease
  }

  /**
   * Starts a reservation for `demand` units that waiting requests spend at once, of which
   * `need` at least (0: any), plus what tops the units held up to the batch the rate calls for.
   */
  #reserve(lease: KeyLease, nowMs: number, demand: number, need: number): Pending {
    measureRate(lease, nowMs)
    // Topped up to one batch beyond the demand: what stays held is at most a batch.
    const held = demand > 0 ? 0 : (lease.lot?.units ?? 0)
    const units = demand + Math.max(0, batchSize(lease.policy, lease.rate, nowMs) - held)
    const promise = reserveUnits(lease.to, lease, lease.policy, units, need).then(
      (reservation): Outcome => {
        this.#apply(lease, reservation)
        return { ok: true, reservation }
      },
      (error: unknown): Outcome => ({ ok: false, error: unavailableOf(error) })
    )
    const pending: Pending = { promise, sinceMs: nowMs, minUnits: need }
    lease.pending = pending
    void promise.then(() => {
      if (lease.pending === pending) delete lease.pending
    })
    return pending
  }

  /** Adds granted units to the lot (or starts a new one), and keeps the object's answer. */
  #apply(lease: KeyLease, reservation: Reservation): void {
    const { granted, chargedAtMs, validUntilMs, epoch } = reservation
    lease.snapshot = reservation.decision
    if (granted === 0) return
    const nowMs = this.#now()
    const joins = joinsLot(lease, reservation, nowMs)
    const held = joins ? lease.lot!.units : 0
    if (!joins) this.#giveBack(lease, nowMs)
    lease.lot = { units: granted + held, chargedAtMs, validUntilMs, epoch }
    // A lease dropped meanwhile (a policy change, a reset, eviction) takes nothing more.
    if (this.#leases.get(leaseId(lease.ruleId, lease.key)) !== lease) this.#giveBack(lease, nowMs)
  }

  /**
   * Reserves the next batch in the background once the units run below half a batch. A key
   * too slow to spend one unit within the horizon (batch 0) reserves only on demand.
   */
  #refillAhead(lease: KeyLease, nowMs: number): void {
    if (lease.pending) return
    const batch = batchSize(lease.policy, lease.rate, nowMs)
    if (batch === 0 || (lease.lot?.units ?? 0) * 2 >= batch) return
    this.#inBackground(this.#reserve(lease, nowMs, 0, 0).promise)
  }

  /** Hands the lot's units back in the background, when that can do any good. */
  #giveBack(lease: KeyLease, nowMs: number): void {
    const lot = lease.lot
    delete lease.lot
    if (!lot || lot.units <= 0 || !worthRefunding(lease.policy, lot.chargedAtMs, nowMs)) return
    this.#inBackground(refundUnits(lease.to, lease, lease.policy, lot))
  }

  /** At most once per {@link QUIET_MS}: hands back the units of keys that went quiet. */
  #sweep(nowMs: number): void {
    if (nowMs - this.#lastSweepMs < QUIET_MS) return
    this.#lastSweepMs = nowMs
    for (const [id, lease] of this.#leases) {
      if (nowMs - lease.lastUsedMs < QUIET_MS) break // most recently used come last
      if (lease.pending) continue
      this.#giveBack(lease, nowMs)
      this.#leases.delete(id)
    }
  }

  #inBackground(promise: Promise<unknown>): void {
    this.#background.add(promise)
    void promise.finally(() => this.#background.delete(promise))
    this.#keepAlive(promise)
  }
}

let isolateBook: LeaseBook | undefined

/** This isolate's lease book, made on first use. */
export function isolateLeases(): LeaseBook {
  return (isolateBook ??= new LeaseBook())
}
