/**
 * @module tools/scale/bounds
 * The exact limits a run's admissions are held to, over its tiers and its rule's versions:
 *
 * - Tiers, as the design guarantees them (`positional`): the requests of tiers whose limit is
 *   at most a tier's are admitted at most that tier's limit (a request of the lowest tier counts
 *   against every tier's bound, one of the highest only against its own). As exact mode
 *   decides (`shared`): every request counts against every tier's bound, and one fits when its
 *   own tier's bound has room (what an exact limiter admits, and what an early denial is).
 * - Versions: before an edit, the rule's; from the first request under the version after until
 *   the edit's propagation ends, both (the stricter binds); then the version after. The version
 *   after starts with what the version before counted then, all at once: what an edit leaves
 *   of a key's count (docs/configuration.md).
 *
 * Each bound is an exact oracle (`oracle.ts`). Times are the key's root object's clock.
 */
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { oracleFor, type Oracle } from './oracle'

/** A rule version's policy per tier, the lowest limit first. */
type Version = readonly LeasablePolicy[]

/** Whether two policies count in one state (an edit of the limit or burst alone). */
function sameFamily(a: LeasablePolicy, b: LeasablePolicy): boolean {
  return a.algorithm === b.algorithm && a.periodMs === b.periodMs
}

/** When a run's edit takes effect: set as the run learns it. */
export interface EditTimes {
  /** The first request under the version after (Infinity until one comes). */
  firstMs: number
  /** When the version before is out of use. */
  overlapEndMs: number
}

/** Exact limits held against one run's admissions. */
export class Bounds {
  readonly #before: Oracle[]
  readonly #after: Oracle[] | undefined
  readonly #edit: EditTimes
  readonly #shared: boolean
  /** The versions' policies: before, after. */
  readonly #versions: [Version, Version]
  #startedMs: number | undefined

  /**
   * @param before - the rule's version before any edit
   * @param after - the version the edit makes, if there is an edit
   * @param edit - when it takes effect (read as the run goes)
   * @param shared - tiers as exact mode decides them, rather than as the design guarantees
   */
  constructor(
    before: Version,
    after?: Version,
    edit: EditTimes = { firstMs: Infinity, overlapEndMs: Infinity },
    shared = false
  ) {
    this.#before = before.map(oracleFor)
    this.#after = after?.map(oracleFor)
    this.#versions = [before, after ?? before]
    this.#edit = edit
    this.#shared = shared
  }

  /**
   * Whether a request of `tier` and `cost` fits at `atMs` under every bound that holds it.
   *
   * @param atMs - when (never earlier than a previous call's)
   * @param cost - its units
   * @param tier - its tier (0, the lowest, when there are none)
   */
  fits(atMs: number, cost: number, tier: number): boolean {
    return this.#holding(atMs, tier).fit.every((oracle) => oracle.fits(atMs, cost))
  }

  /**
   * Charges a request if it fits every bound that holds it; `false` (nothing charged) if not.
   *
   * @param atMs - when
   * @param cost - its units
   * @param tier - its tier
   */
  admit(atMs: number, cost: number, tier: number): boolean {
    const { fit, charge } = this.#holding(atMs, tier)
    if (!fit.every((oracle) => oracle.fits(atMs, cost))) return false
    for (const oracle of charge) oracle.force(atMs, cost)
    return true
  }

  /**
   * Charges a request to every bound that holds it and has room for it; whether all had.
   *
   * @param atMs - when
   * @param cost - its units
   * @param tier - its tier
   * @param before - its units were charged before the version after was in use
   */
  admitEach(atMs: number, cost: number, tier: number, before = false): boolean {
    const { fit, charge } = this.#holding(atMs, tier)
    let all = true
    for (const oracle of charge) {
      // Units charged before the edit took effect count under the version after without being
      // held to it: they were the version before's to give.
      if (before && !this.#before.includes(oracle)) {
        oracle.force(atMs, cost)
        continue
      }
      const fitted = oracle.admit(atMs, cost)
      if (fit.includes(oracle)) all &&= fitted
    }
    return all
  }

  /**
   * Whether units the root charged at `chargedAtMs` (its clock) were charged before the
   * version after was in use.
   *
   * @param chargedAtMs - when the root charged them
   */
  chargedBefore(chargedAtMs: number): boolean {
    return this.#after !== undefined && chargedAtMs < this.#edit.firstMs
  }

  /**
   * How many requests of cost 1 and `tier` fit at `atMs`, one after another.
   *
   * @param atMs - when
   * @param tier - their tier
   */
  room(atMs: number, tier: number): number {
    let room = Number.POSITIVE_INFINITY
    for (const oracle of this.#holding(atMs, tier).fit) room = Math.min(room, oracle.room(atMs))
    return room
  }

  /**
   * The bounds a request of `tier` must fit at `atMs`, and those it is charged to: of each
   * version in use, its tier's and those above it (`positional`), or its tier's alone and every
   * tier's (`shared`).
   */
  #holding(atMs: number, tier: number): { fit: Oracle[]; charge: Oracle[] } {
    const versions: Oracle[][] = []
    if (!this.#after || atMs < this.#edit.overlapEndMs) versions.push(this.#before)
    if (this.#after && atMs >= this.#edit.firstMs) {
      if (this.#startedMs === undefined) this.#start(this.#edit.firstMs)
      versions.push(this.#after)
    }
    if (!this.#shared) {
      const held = versions.flatMap((oracles) => oracles.slice(tier))
      return { fit: held, charge: held }
    }
    return { fit: versions.map((oracles) => oracles[tier]!), charge: versions.flat() }
  }

  /**
   * The version after begins with what the version before counted then: as it is (a limit or
   * burst edited, the same algorithm and period), else all of it at once.
   */
  #start(atMs: number): void {
    this.#startedMs = atMs
    const after = this.#after!
    after.forEach((oracle, k) => {
      const before = this.#before[k]!
      if (sameFamily(this.#versions[0][k]!, this.#versions[1][k]!)) {
        after[k] = before.continued(this.#versions[1][k]!, atMs)
        return
      }
      const used = before.capacity - before.room(atMs)
      if (used > 0) oracle.force(atMs, Math.min(used, oracle.capacity))
    })
  }
}
