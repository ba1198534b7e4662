/**
 * @module tools/scale/namespace
 * A Durable Object namespace over simulated objects: it serves any name, builds each object at
 * the location of its first caller (or at the location its `locationHint` names) and runs each
 * as its own {@link ObjectServer}. Each isolate, and each object, sees the namespace through a
 * view bound to its location, so every call pays the one-way delay from there and back.
 */
import type { LocationHint } from '../../src/types'
import type { ObjectClass } from './object-base'
import { ObjectServer, type ServerConfig, type ServerObserver } from './object-server'
import type { VirtualClock } from './virtual-time'

/** Where objects live and how far apart places are. */
export interface Geography {
  /** One-way delay between two locations (whole ms). */
  oneWayMs(from: number, to: number): number
  /** The location where an object created with `hint` lives. */
  hintLocation(hint: LocationHint): number
}

/** The part of `DurableObjectNamespace` the simulator serves. */
export interface NamespaceView {
  getByName(name: string, options?: { locationHint?: LocationHint }): unknown
  idFromName(name: string): { name: string; toString(): string }
  get(id: { name?: string }, options?: { locationHint?: LocationHint }): unknown
  jurisdiction(jurisdiction: string): NamespaceView
}

/** Every object of one class, and the views callers reach them through. */
export class SimNamespace<T extends object> {
  /** Objects by identity (`jurisdiction/name`, or the name). */
  readonly objects = new Map<string, ObjectServer<T>>()

  /**
   * @param clock - virtual time
   * @param geography - locations and delays
   * @param Class - the class every object runs
   * @param config - service time and queue bound of each object
   * @param observer - where calls are counted
   * @param binding - the name under which objects see the namespace in their `env`
   */
  constructor(
    readonly clock: VirtualClock,
    readonly geography: Geography,
    readonly Class: ObjectClass<T>,
    readonly config: ServerConfig,
    readonly observer: ServerObserver,
    readonly binding = 'LIMITER'
  ) {}

  /**
   * The namespace as seen from `location`.
   *
   * @param location - the caller's location
   * @param jurisdiction - a jurisdiction's namespace (a separate set of objects)
   */
  view(location: number, jurisdiction?: string): NamespaceView {
    // Stubs hold nothing but their address here: each is made once per view.
    const stubs = new Map<string, object>()
    const stub = (name: string, hint?: LocationHint) => {
      const address = hint ? `${hint}|${name}` : name
      let found = stubs.get(address)
      if (!found) stubs.set(address, (found = this.#stub(location, name, hint, jurisdiction)))
      return found
    }
    return {
      getByName: (name, options) => stub(name, options?.locationHint),
      idFromName: (name) => ({ name, toString: () => name }),
      get: (id, options) => stub(id.name ?? String(id), options?.locationHint),
      jurisdiction: (j) => this.view(location, j),
    }
  }

  /**
   * The object with this identity, if it was ever called.
   *
   * @param name - its name
   * @param jurisdiction - its jurisdiction, if any
   */
  object(name: string, jurisdiction?: string): ObjectServer<T> | undefined {
    return this.objects.get(identity(name, jurisdiction))
  }

  #stub(from: number, name: string, hint: LocationHint | undefined, jurisdiction?: string) {
    const methods = new Map<string, (...args: unknown[]) => Promise<unknown>>()
    const method = (property: string) => {
      let send = methods.get(property)
      if (!send)
        methods.set(
          property,
          (send = (...args: unknown[]) => {
            const server = this.#serverFor(from, name, hint, jurisdiction)
            return server.send(property, args, this.geography.oneWayMs(from, server.location))
          })
        )
      return send
    }
    // Not a thenable: a stub is awaited as a value.
    return new Proxy(
      {},
      {
        get: (_, property) =>
          typeof property === 'string' && property !== 'then' ? method(property) : undefined,
      }
    )
  }

  /** The object, created on its first call where the caller (or the hint) is. */
  #serverFor(from: number, name: string, hint: LocationHint | undefined, jurisdiction?: string) {
    const id = identity(name, jurisdiction)
    let server = this.objects.get(id)
    if (!server) {
      const location = hint ? this.geography.hintLocation(hint) : from
      const env = { [this.binding]: this.view(location, jurisdiction) }
      server = new ObjectServer(
        name,
        location,
        this.clock,
        this.config,
        this.Class,
        env,
        this.observer
      )
      this.objects.set(id, server)
    }
    return server
  }
}

function identity(name: string, jurisdiction?: string): string {
  return jurisdiction ? `${jurisdiction}/${name}` : name
}
