/**
 * @module limiter/lease-table
 * A lease book's keys: one lease per rule and key, least recently used first, at most a bound
 * of them. A key whose policy changed gets a new lease; the old one, and one pushed out by the
 * bound, go to the book to hand back.
 */
import { leaseId, type KeyLease, type LeaseKey } from './key-lease'
import { samePolicy } from './lease-sizing'
import type { LeasablePolicy } from '../algorithms/reserve'

/** What a table is told to make and drop leases with. */
export interface LeaseTableOptions<L extends KeyLease, A> {
  /** Keys it keeps, least recently used dropped first. */
  maxKeys: number
  /** A new lease for a key, with what its use was given ({@link LeaseTable.touch}'s `made`). */
  make: (ref: LeaseKey & { policy: LeasablePolicy }, nowMs: number, made: A) => L
  /** A lease the table let go while it may hold units (its policy changed, or it was pushed out). */
  release: (lease: L, nowMs: number) => void
}

/** A lease book's keys, in the order they were last used. */
export class LeaseTable<L extends KeyLease, A> {
  readonly #leases = new Map<string, L>()
  readonly #options: LeaseTableOptions<L, A>
  /** The lease touched last: the last in {@link #leases}' order. */
  #recent: L | undefined

  /** @param options - the bound, and how leases are made and let go */
  constructor(options: LeaseTableOptions<L, A>) {
    this.#options = options
  }

  /**
   * The key's lease, if there is one (its use not noted).
   *
   * @param ref - the key
   */
  get(ref: LeaseKey): L | undefined {
    return this.#leases.get(leaseId(ref.ruleId, ref.key))
  }

  /**
   * The key's lease, made or remade when its policy changed, marked most recently used.
   *
   * @param ref - the key and its policy
   * @param nowMs - the time of the use
   * @param made - what a new lease is made with
   */
  touch(ref: LeaseKey & { policy: LeasablePolicy }, nowMs: number, made: A): L {
    // Already the most recently used (a hot key): nothing to look up or move.
    const recent = this.#recent
    if (
      recent?.key === ref.key &&
      recent.ruleId === ref.ruleId &&
      samePolicy(recent.policy, ref.policy)
    ) {
      recent.lastUsedMs = nowMs
      return recent
    }
    const id = leaseId(ref.ruleId, ref.key)
    let lease = this.#leases.get(id)
    if (lease) this.#leases.delete(id)
    if (lease && !samePolicy(lease.policy, ref.policy)) {
      this.#options.release(lease, nowMs)
      lease = undefined
    }
    lease ??= this.#options.make(ref, nowMs, made)
    lease.lastUsedMs = nowMs
    this.#leases.set(id, lease)
    this.#recent = lease
    if (this.#leases.size > this.#options.maxKeys) {
      const oldest = this.#leases.values().next().value!
      this.drop(oldest)
      this.#options.release(oldest, nowMs)
    }
    return lease
  }

  /** The leases, least recently used first (one may be dropped while they are read). */
  values(): IterableIterator<L> {
    return this.#leases.values()
  }

  /**
   * Drops a key's lease (not its units: the caller hands them back or lets them go).
   *
   * @param ref - the key
   */
  drop(ref: LeaseKey): void {
    const id = leaseId(ref.ruleId, ref.key)
    if (this.#leases.get(id) === this.#recent) this.#recent = undefined
    this.#leases.delete(id)
  }
}
