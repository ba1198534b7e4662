/**
 * @module limiter/isolate-lessors
 * An isolate's lessors for its lease book (`leases.ts`): its location's object, and the key's
 * root for a key leased straight from it (`leasesFromRoot`). Each is made once (a request makes
 * none) and remade if what made it changed.
 */
import { locationUpstream, rootUpstream, type Upstream } from './lease-calls'
import type { ObjectNamespace } from '../calls/object-name'
import type { Region } from '../calls/region'
import type { ClientStats } from '../calls/stats'

/** Where an isolate is when the request says nothing of it (local runs). */
const UNKNOWN_LOCATION = 'local'

/** An upstream made once for what it was made with, remade when that changes. */
class MadeUpstream {
  #to: Upstream | undefined
  #namespace: ObjectNamespace | undefined
  #timeoutMs = 0
  #stats: ClientStats | undefined

  /** The upstream for these, made by `make` unless the one made last was for them. */
  get(
    namespace: ObjectNamespace,
    timeoutMs: number,
    stats: ClientStats,
    make: () => Upstream
  ): Upstream {
    if (
      this.#to &&
      this.#namespace === namespace &&
      this.#timeoutMs === timeoutMs &&
      this.#stats === stats
    )
      return this.#to
    this.#namespace = namespace
    this.#timeoutMs = timeoutMs
    this.#stats = stats
    return (this.#to = make())
  }
}

/** Where an isolate is, and its lessors from there. */
export class IsolateLessors {
  readonly #lessee: string
  #location: string | undefined
  #region: Region | undefined
  readonly #locationTo = new MadeUpstream()
  readonly #root = new MadeUpstream()

  /**
   * @param lessee - who the isolate's book is to its lessors
   * @param location - where the isolate is (`request.cf.colo`), if known from the start
   * @param region - its region, if known from the start
   */
  constructor(lessee: string, location: string | undefined, region: Region | undefined) {
    this.#lessee = lessee
    this.#location = location
    this.#region = region
  }

  /**
   * Notes where this isolate is (its first request's `cf.colo`; an isolate never moves).
   *
   * @param location - the data center's code, if the request has one
   * @param region - its region, if the request says (`regionOf`)
   */
  locate(location: string | undefined, region?: Region): void {
    if (this.#location !== undefined || location === undefined) return
    this.#location = location
    this.#region = region
  }

  /** Whether this isolate's location is known. */
  get located(): boolean {
    return this.#location !== undefined
  }

  /**
   * The lessor of this isolate for a key leased straight from its root: the root.
   *
   * @param namespace - the `LIMITER` binding
   * @param timeoutMs - the longest wait for a reservation
   * @param stats - where its calls are counted
   */
  rootOf(namespace: ObjectNamespace, timeoutMs: number, stats: ClientStats): Upstream {
    return this.#root.get(namespace, timeoutMs, stats, () =>
      rootUpstream(namespace, { stats, timeoutMs, lessee: this.#lessee })
    )
  }

  /**
   * The lessor of this isolate: its location's object.
   *
   * @param namespace - the `LIMITER` binding
   * @param timeoutMs - the longest wait for a reservation
   * @param stats - where its calls are counted
   */
  locationOf(namespace: ObjectNamespace, timeoutMs: number, stats: ClientStats): Upstream {
    const make = () =>
      locationUpstream(namespace, this.#location ?? UNKNOWN_LOCATION, {
        stats,
        timeoutMs,
        lessee: this.#lessee,
        region: this.#region,
      })
    // Kept only once located: until then, a later request may still tell where it is.
    return this.#location === undefined
      ? make()
      : this.#locationTo.get(namespace, timeoutMs, stats, make)
  }
}
