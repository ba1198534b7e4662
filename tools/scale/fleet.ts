/**
 * @module tools/scale/fleet
 * The isolates: spread over locations in proportion to traffic (at least one per location that
 * has any), each with its own limiter client; a request goes to one of its location's isolates at
 * random. With churn, each isolate lives an exponentially distributed time and is replaced by a
 * cold one where traffic is then (at the same location when it was the last one there). A dead
 * isolate's client is dropped as it is: nothing it holds is handed back.
 */
import type { Scheduled } from './heap'
import { AliasTable, exponential, type Random } from './random'
import type { VirtualClock } from './virtual-time'
import { shares } from './world'

/** One isolate. */
interface SimIsolate<C> {
  readonly id: number
  readonly location: number
  readonly client: C
  /** Its death, while it is alive and dies of churn. */
  death?: Scheduled
}

/** How the fleet is made and renewed. */
export interface FleetOptions<C> {
  clock: VirtualClock
  /** Isolates alive at any time. */
  count: number
  /** Mean lifetime (ms); `Infinity`: no churn. */
  meanLifeMs: number
  random: Random
  /** Traffic per location now (where new isolates start). */
  weights: () => readonly number[]
  /** A new, cold client at a location. */
  makeClient: (location: number, id: number) => C
}

/** The isolates alive, by location. */
export class Fleet<C> {
  // The clients alone, not the isolates: a request reads one object less on its way in.
  readonly #byLocation: C[][]
  readonly #alive = new Set<SimIsolate<C>>()
  readonly #options: FleetOptions<C>
  #nextId = 0
  /** Isolates started after the first ones (churn, and deploys). */
  born = 0

  /** @param options - size, churn and how to make a client */
  constructor(options: FleetOptions<C>) {
    this.#options = options
    this.#byLocation = options.weights().map(() => [])
    this.#populate()
  }

  /**
   * A deploy: every isolate is dropped as it is (nothing it holds handed back) and as many cold
   * ones start, spread as traffic is now.
   */
  replaceAll(): void {
    for (const isolate of this.#alive) if (isolate.death) this.#options.clock.cancel(isolate.death)
    this.#alive.clear()
    for (const here of this.#byLocation) here.length = 0
    this.born += this.#options.count
    this.#populate()
  }

  #populate(): void {
    shares(this.#options.weights(), this.#options.count, 1).forEach((n, location) => {
      for (let i = 0; i < n; i++) this.#start(location)
    })
  }

  /** Isolates alive at each location. */
  counts(): number[] {
    return this.#byLocation.map((isolates) => isolates.length)
  }

  /**
   * The client of an isolate at `location`, at random.
   *
   * @param location - where the request arrived
   * @throws {Error} when the location has no isolate (the run's weights gave it no traffic)
   */
  pick(location: number): C {
    const here = this.#byLocation[location]!
    const client = here[Math.floor(this.#options.random() * here.length)]
    if (!client) throw new Error(`no isolate at location ${location}`)
    return client
  }

  #start(location: number): void {
    const { clock, meanLifeMs, random, makeClient } = this.#options
    const id = this.#nextId++
    const isolate: SimIsolate<C> = { id, location, client: makeClient(location, id) }
    this.#byLocation[location]!.push(isolate.client)
    this.#alive.add(isolate)
    if (Number.isFinite(meanLifeMs))
      isolate.death = clock.after(Math.max(1, exponential(random, meanLifeMs)), () =>
        this.#die(isolate)
      )
  }

  #die(isolate: SimIsolate<C>): void {
    this.#alive.delete(isolate)
    const here = this.#byLocation[isolate.location]!
    here.splice(here.indexOf(isolate.client), 1)
    const weights = this.#options.weights()
    const location =
      here.length === 0 && weights[isolate.location]! > 0
        ? isolate.location
        : new AliasTable(weights).draw(this.#options.random)
    this.born++
    this.#start(location)
  }
}
