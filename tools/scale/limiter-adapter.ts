/**
 * @module tools/scale/limiter-adapter
 * Everything the scale simulator knows about how the limiter is called, in one place: the object
 * class the namespace runs, the client state one isolate keeps, how a request is decided, and
 * which object is the key's root. A change of design (new object names, a tier of objects per
 * location, new methods) changes this file and nothing else in `tools/scale/`.
 *
 * `leased` runs a `LeaseBook` per isolate, placed in the isolate's location (its colo): it
 * leases from the key's object in that location (`<root>@<colo>`, a `RateLimiterObject` built
 * where its first isolate called it), which leases from the key's root object. `exact` runs
 * `charge()` with a `LimiterIsolate` per isolate (coalescing and the block cache included).
 */
import { DEFAULT_SETTINGS } from '../../src/http/shared/settings'
import { charge, type ChargeCall, type ChargeResult } from '../../src/limiter/client'
import { LimiterIsolate } from '../../src/limiter/isolate'
import { LeaseBook } from '../../src/limiter/leased/leases'
import type { LimiterNamespace } from '../../src/limiter/limiter-namespace'
import type { Region } from '../../src/limiter/calls/region'
import { nameOf } from '../../src/limiter/calls/object-name'
import { OBJECT_CLOCK, RateLimiterObject } from '../../src/limiter/rate-limiter-object'
import { ClientStats } from '../../src/limiter/calls/stats'
import type { MachineClock } from './clocks'
import { servedAtMs } from './object-server'
import type { NamespaceView } from './namespace'

/**
 * The class every simulated object runs: the limiter's, each object reading the clock of the
 * machine it runs on.
 *
 * @param clockOf - an object's clock, by its name
 */
export function objectClass(clockOf: (name: string) => MachineClock): typeof RateLimiterObject {
  return class SimulatedObject extends RateLimiterObject {
    readonly #clock = clockOf(this.ctx.id.name ?? this.ctx.id.toString());

    override [OBJECT_CLOCK](): number {
      return this.#clock.read(Date.now())
    }
  }
}

/** How requests are decided. */
export type Mode = 'exact' | 'leased'

/**
 * The object an isolate that just started calls first: in leased mode its location's object
 * (the key's object in its colo), in exact mode the key's root.
 */
export const CALLS_FIRST: Readonly<Record<Mode, 'location' | 'root'>> = {
  exact: 'root',
  leased: 'location',
}

/** What the simulator tells the adapter about one isolate. */
export interface IsolateSeat {
  /**
   * The isolate's number in the run: its lease book's id (a random one would make where each
   * book asks within a horizon, and so the run, differ from one run to the next).
   */
  readonly id: number
  /** The isolate's location (an index into the world's locations). */
  readonly location: number
  /** The location's name, as `request.cf.colo` would give it. */
  readonly colo: string
  /** Its region, as `regionOf(request.cf)` would give it. */
  readonly region: Region
  /** The `LIMITER` binding as this isolate sees it: calls pay the delay from its location. */
  readonly namespace: NamespaceView
  /** The clock of the machine it runs on. */
  readonly clock: MachineClock
}

/** One request for one key: what a rule's check carries. */
export type SimRequest = Pick<ChargeCall, 'rule' | 'key' | 'policy' | 'cost' | 'failMode'>

/** What became of a request. */
export interface Verdict {
  /** Let through (admitted, or failed open). */
  allowed: boolean
  /** Decided by the limiter (`false`: it failed open or closed). */
  enforced: boolean
  /** Decided in the isolate without an awaited call to an object. */
  local: boolean
  /**
   * When the decision was taken, if not when the isolate got it: when an object took it (true
   * time), or when the key's root charged the units of a request that waited for them (the
   * root's clock, `onRootClock`).
   */
  decidedAtMs?: number | undefined
  onRootClock?: boolean
  /** Leased: when the key's root charged the units the request spent (the root's clock). */
  chargedAtMs?: number | undefined
}

/** One isolate's limiter client. */
export interface LimiterClient {
  /**
   * Decides a request: a {@link Verdict} at once when the isolate decided without awaiting
   * anything, a promise otherwise.
   */
  decide(request: SimRequest): Verdict | Promise<Verdict>
}

/** The client of one isolate: its own state, its view of the namespace. */
export function limiterClient(
  seat: IsolateSeat,
  mode: Mode,
  timeoutMs = DEFAULT_SETTINGS.limiterTimeoutMs
): LimiterClient {
  const namespace = seat.namespace as unknown as LimiterNamespace
  if (mode === 'exact') {
    const isolate = new LimiterIsolate({ stats: SEAT_STATS })
    return {
      decide: (request) =>
        Promise.resolve(charge(namespace, callOf(request, mode), timeoutMs, isolate)).then(
          verdictOf,
          failedClosed
        ),
    }
  }
  return new LeasedClient(seat, namespace, timeoutMs)
}

/**
 * A leased isolate's client: a class, not a closure, so what a request reads first (the book,
 * the namespace) sits in one object. Thousands of isolates take turns at random, and each
 * object a request reaches through is most often out of the processor's cache.
 */
class LeasedClient implements LimiterClient {
  readonly #book: LeaseBook
  readonly #namespace: LimiterNamespace
  readonly #timeoutMs: number

  constructor(seat: IsolateSeat, namespace: LimiterNamespace, timeoutMs: number) {
    const { clock } = seat
    this.#book = new LeaseBook({
      now: () => clock.read(Date.now()),
      keepAlive: ignoreFailure,
      stats: SEAT_STATS,
      location: seat.colo,
      region: seat.region,
      id: `isolate-${seat.id}`,
    })
    this.#namespace = namespace
    this.#timeoutMs = timeoutMs
  }

  decide(request: SimRequest): Verdict | Promise<Verdict> {
    const result = this.#book.charge(this.#namespace, callOf(request, 'leased'), this.#timeoutMs)
    return result instanceof Promise ? result.then(verdictOf, failedClosed) : verdictOf(result)
  }
}

/**
 * The name of the key's root object: the one whose load the simulator reports as the key's.
 *
 * @param request - a request for the key
 */
export function rootObjectName(request: SimRequest): string {
  const name = nameOf(request)
  if (typeof name !== 'string') throw new Error('the simulator uses keys short enough to be names')
  return name
}

/** Counts nothing: the simulator keeps its own counts. */
class SeatStats extends ClientStats {
  override call(): (endMs: number) => void {
    return ignoreFailure
  }

  override decided(): void {}

  override failedOpen(): void {}
}

/** One for every isolate: it keeps nothing. */
const SEAT_STATS = new SeatStats(0)

const calls = { exact: new WeakMap<SimRequest, ChargeCall>(), leased: new WeakMap() }

/** The check for a request, made once per request object and mode (the book keeps no copy). */
function callOf(request: SimRequest, mode: Mode): ChargeCall {
  let call = calls[mode].get(request)
  if (!call) calls[mode].set(request, (call = { ...request, consistency: mode }))
  return call
}

function verdictOf(result: ChargeResult): Verdict {
  if (!result.enforced) return { allowed: true, enforced: false, local: false }
  const verdict: Verdict = {
    allowed: result.decision.allowed,
    enforced: true,
    local: result.local === true,
    decidedAtMs: result.decidedAtMs ?? servedAtMs(result.decision),
  }
  if (result.decidedAtMs !== undefined) verdict.onRootClock = true
  if (result.chargedAtMs !== undefined) verdict.chargedAtMs = result.chargedAtMs
  return verdict
}

/** A key that fails closed throws: the request is refused, undecided. */
function failedClosed(): Verdict {
  return { allowed: false, enforced: false, local: false }
}

function ignoreFailure(): void {}
