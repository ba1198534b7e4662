/**
 * @module limiter/lease-table
 * A lease book's keys: one lease per rule, key and policy (a tier's policy, a version's), least
 * recently used first, at most a bound of them. Requests of two tiers of one key hold a lease
 * each, charged at the root under their own limit: a switch of tier from one request to the
 * next costs no call. A lease pushed out by the bound goes to the book to hand back, and so does
 * a tier's lease under a policy a rule edit replaced, in a book whose lessee runs one version
 * of the rules (an isolate); a location's object, whose isolates run both while an edit
 * propagates, keeps both, and the one left unused goes back when it sweeps its quiet keys.
 */
import { samePolicy } from '../../algorithms/key-record'
import type { Policy } from '../../algorithms'
import type { LeasablePolicy } from '../../algorithms/reserve'
import type { KeyLease, LeaseKey } from './key-lease'

/** A key and the policy its units are counted under. */
type PolicyKey = LeaseKey & { policy: LeasablePolicy }

/** What a table is told to make and drop leases with. */
export interface LeaseTableOptions<L extends KeyLease, A> {
  /** Keys it keeps, least recently used dropped first. */
  maxKeys: number
  /** A new lease for a key, with what its use was given ({@link LeaseTable.touch}'s `made`). */
  make: (ref: PolicyKey, nowMs: number, made: A) => L
  /** A lease the table let go while it may hold units (pushed out by the bound, or replaced). */
  release: (lease: L, nowMs: number) => void
  /**
   * Whether a new policy for a key's tier replaces the one it had: the lessee runs one version
   * of the rules at a time.
   */
  oneVersion?: boolean
}

/** Each policy's tag, made once per policy object (compiled rules keep theirs). */
const tags = new WeakMap<Policy, string>()

/**
 * A policy as a map key: every field it has (as `samePolicy` compares them), in one order.
 *
 * @param policy - a policy
 */
function tagOf(policy: Policy): string {
  let tag = tags.get(policy)
  if (tag === undefined) {
    const fields = policy as unknown as Record<string, unknown>
    tag = Object.keys(fields)
      .filter((name) => fields[name] !== undefined)
      .sort()
      .map((name) => `${name}=${String(fields[name])}`)
      .join(';')
    tags.set(policy, tag)
  }
  return tag
}

/** The map key of a key's lease under a policy. */
function idOf(ref: PolicyKey): string {
  return `${ref.ruleId}\n${ref.key}\n${tagOf(ref.policy)}`
}

/** A lease book's keys, in the order they were last used. */
export class LeaseTable<L extends KeyLease, A> {
  readonly #leases = new Map<string, L>()
  /** With {@link LeaseTableOptions.oneVersion}: each key's tier's lease. */
  readonly #tiers = new Map<string, L>()
  readonly #options: LeaseTableOptions<L, A>
  /** The lease touched last: the last in {@link #leases}' order. */
  #recent: L | undefined

  /** @param options - the bound, and how leases are made and let go */
  constructor(options: LeaseTableOptions<L, A>) {
    this.#options = options
  }

  /**
   * The key's lease under a policy, if there is one (its use not noted).
   *
   * @param ref - the key and its policy
   */
  get(ref: PolicyKey): L | undefined {
    const recent = this.#recent
    if (recent && sameLease(recent, ref)) return recent
    return this.#leases.get(idOf(ref))
  }

  /**
   * The key's lease under a policy, made if there is none, marked most recently used.
   *
   * @param ref - the key and its policy
   * @param nowMs - the time of the use
   * @param made - what a new lease is made with
   */
  touch(ref: PolicyKey, nowMs: number, made: A): L {
    // Already the most recently used (a hot key): nothing to look up or move.
    const recent = this.#recent
    if (recent && sameLease(recent, ref)) {
      recent.lastUsedMs = nowMs
      return recent
    }
    const id = idOf(ref)
    let lease = this.#leases.get(id)
    if (lease) this.#leases.delete(id)
    else lease = this.#make(ref, nowMs, made)
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

  /** A new lease; one that a new version of its tier's policy replaces goes. */
  #make(ref: PolicyKey, nowMs: number, made: A): L {
    const lease = this.#options.make(ref, nowMs, made)
    if (!this.#options.oneVersion) return lease
    const tier = tierOf(ref)
    const replaced = this.#tiers.get(tier)
    this.#tiers.set(tier, lease)
    if (replaced) {
      this.drop(replaced)
      this.#options.release(replaced, nowMs)
    }
    return lease
  }

  /** The leases, least recently used first (one may be dropped while they are read). */
  values(): IterableIterator<L> {
    return this.#leases.values()
  }

  /**
   * Drops a key's lease under a policy (not its units: the caller hands them back or lets them go).
   *
   * @param lease - the lease
   */
  drop(lease: PolicyKey): void {
    const id = idOf(lease)
    const dropped = this.#leases.get(id)
    if (dropped === this.#recent) this.#recent = undefined
    this.#leases.delete(id)
    if (dropped && this.#tiers.get(tierOf(dropped)) === dropped) this.#tiers.delete(tierOf(dropped))
  }

  /**
   * Drops a key's leases under every policy, and returns them (their units the caller's).
   *
   * @param ruleId - the rule
   * @param key - the limit key
   */
  dropKey(ruleId: string, key: string): L[] {
    const dropped = [...this.#leases.values()].filter(
      (lease) => lease.ruleId === ruleId && lease.key === key
    )
    for (const lease of dropped) this.drop(lease)
    return dropped
  }
}

/** The map key of a key's tier. */
function tierOf(ref: PolicyKey): string {
  return `${ref.ruleId}\n${ref.key}\n${ref.policy.tier ?? ''}`
}

/** Whether a lease is the key's under the policy. */
function sameLease(lease: KeyLease, ref: PolicyKey): boolean {
  return (
    lease.key === ref.key && lease.ruleId === ref.ruleId && samePolicy(lease.policy, ref.policy)
  )
}
