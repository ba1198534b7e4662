/**
 * @module tools/scale/clocks
 * Every machine's clock: isolates, and the key's objects (its root, each region's and each
 * location's). No two machines agree on the time: each clock is off the true (virtual) time by
 * an offset drawn within ±`skewMs` (or exactly `skewMs`, for a run that puts one kind of machine
 * ahead or behind), and drifts from it by a rate drawn within ±`driftPpm`
 * parts per million, fixed per machine and seed. Which kinds of machine are off is a choice
 * (`skewOn`); the others keep the true time.
 */
import { stream } from './random'

/** A kind of machine whose clock may be off. */
export type MachineKind = 'isolate' | 'location' | 'region' | 'root'

/** Every kind, in the order the command line lists them. */
export const MACHINE_KINDS: readonly MachineKind[] = ['isolate', 'location', 'region', 'root']

/** How far clocks are off. */
export interface ClockWorld {
  /**
   * Each machine's offset is drawn within ±this (ms); with `fixed`, each is exactly this
   * (negative: behind the true time).
   */
  skewMs: number
  fixed?: boolean
  /** Each machine's drift is drawn within ±this (parts per million). */
  driftPpm: number
  /** The kinds of machine whose clocks are off. */
  skewOn: readonly MachineKind[]
}

/** One machine's clock: its reading at a true time. */
export interface MachineClock {
  /** The machine's reading at true time `trueMs`. */
  read(trueMs: number): number
  /** The true time at which the machine reads `readingMs`. */
  trueAt(readingMs: number): number
}

const TRUE_CLOCK: MachineClock = { read: (ms) => ms, trueAt: (ms) => ms }

/** The clocks of one run. */
export class Clocks {
  readonly #world: ClockWorld
  readonly #seed: number
  readonly #startMs: number
  readonly #made = new Map<string, MachineClock>()

  /**
   * @param world - how far clocks are off
   * @param seed - the run's seed
   * @param startMs - the run's first instant (drift counts from it)
   */
  constructor(world: ClockWorld, seed: number, startMs: number) {
    this.#world = world
    this.#seed = seed
    this.#startMs = startMs
  }

  /**
   * The clock of a machine.
   *
   * @param kind - what the machine is
   * @param name - its name (an isolate's number, an object's name)
   */
  of(kind: MachineKind, name: string): MachineClock {
    if (!this.#world.skewOn.includes(kind)) return TRUE_CLOCK
    if (this.#world.skewMs === 0 && this.#world.driftPpm === 0) return TRUE_CLOCK
    const id = `${kind}:${name}`
    let clock = this.#made.get(id)
    if (!clock) this.#made.set(id, (clock = this.#make(id)))
    return clock
  }

  /**
   * The clock of a key's object, its kind read from its name: `<root>@region:<hint>` is a
   * regional object, `<root>@<colo>` a location's, a name without `@` the key's root.
   *
   * @param name - the object's name
   */
  ofObject(name: string): MachineClock {
    const at = name.lastIndexOf('@')
    const kind: MachineKind =
      at < 0 ? 'root' : name.startsWith('region:', at + 1) ? 'region' : 'location'
    return this.of(kind, name)
  }

  #make(id: string): MachineClock {
    const random = stream(this.#seed, `clock ${id}`)
    const drawn = 2 * random() - 1
    const offsetMs = Math.round(this.#world.fixed ? this.#world.skewMs : drawn * this.#world.skewMs)
    const rate = 1 + ((2 * random() - 1) * this.#world.driftPpm) / 1e6
    const startMs = this.#startMs
    // Whole ms, as Workers' clocks read.
    return {
      read: (trueMs) => Math.floor(startMs + offsetMs + (trueMs - startMs) * rate),
      trueAt: (readingMs) => Math.ceil(startMs + (readingMs - startMs - offsetMs) / rate),
    }
  }
}
