/**
 * @module tools/scale/object-server
 * One Durable Object as a server: a FIFO queue in front of one instance that takes `serviceMs`
 * per call, answers "overloaded" when more than `queueBound` calls wait, and can restart (its
 * queued and running calls fail, it is unavailable for a while, then a new instance is built
 * over the same storage). A method runs when its call starts, with `Date.now()` at that instant;
 * its answer leaves when the service time is over (or, for an async method, when it settles,
 * if later: the object awaiting another object lets the next call start, as an open input gate
 * does) and reaches the caller one network delay later.
 */
import type { MachineClock } from './clocks'
import type { Scheduled } from './heap'
import { instantiate, type ObjectClass } from './object-base'
import { simState, SimStorage } from './object-state'
import type { VirtualClock } from './virtual-time'

/** How an object serves calls. */
export interface ServerConfig {
  /** Time one call occupies the object (ms). */
  serviceMs: number
  /** Calls that may wait; one more is answered "overloaded". */
  queueBound: number
  /**
   * What befalls a call, drawn once per call as it arrives: `lost`, it runs but its answer is
   * lost on its way back (the caller gets a retryable error, as for a connection lost);
   * `refused`, it is refused before it runs with a retryable error (a reset); `overloaded`, as
   * a full queue refuses it. Nothing, when absent or `undefined`.
   */
  fault?: (method: string) => Fault | undefined
  /** The clock of the machine an object runs on, by its name: its alarms are set by it. */
  clockOf?: (name: string) => MachineClock
}

/** A fault a call may meet ({@link ServerConfig.fault}). */
export type Fault = 'lost' | 'refused' | 'overloaded'

/** What the server reports as it works (the simulator's metrics). */
export interface ServerObserver {
  /** A call reached the object (before the queue bound is checked). */
  arrived(name: string, atMs: number): void
  /** A call was answered "overloaded". */
  overloaded(name: string, atMs: number): void
  /** A call started after waiting `waitMs` in the queue, with its arguments. */
  started(name: string, waitMs: number, atMs: number, args?: readonly unknown[]): void
}

interface Call {
  method: string
  args: unknown[]
  /** One-way network delay between the caller and the object (ms). */
  delayMs: number
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  arrivedAtMs: number
  state: 'queued' | 'running' | 'answered' | 'failed'
  /** When its answer leaves the object. */
  readyAtMs: number
  /** Its answer is lost on the way back. */
  lost?: boolean
  event?: Scheduled
  internal?: boolean
}

const servedAt = new WeakMap<object, number>()

/**
 * When the object that returned `value` ran the call (virtual ms), for decisions an object call
 * returned (alone or in an array); `undefined` for anything else.
 *
 * @param value - a value a stub call resolved
 */
export function servedAtMs(value: unknown): number | undefined {
  return typeof value === 'object' && value !== null ? servedAt.get(value) : undefined
}

/** An error as the runtime raises it, with its flags. */
export function platformError(message: string, flags: Record<string, boolean>): Error {
  return Object.assign(new Error(message), flags)
}

/** One object: its storage, its instance, its queue. */
export class ObjectServer<T extends object> {
  readonly storage: SimStorage
  /** Calls accepted and not answered (for a restart to fail). */
  readonly #pending = new Set<Call>()
  readonly #parked: Call[] = []
  #instance: T | undefined
  #busyUntilMs = 0
  #upAtMs = 0
  #waiting = 0
  #blockers = 0
  /** Counts restarts: what an instance started is void after one. */
  #generation = 0
  #alarm: Scheduled | undefined

  /**
   * @param name - the object's name (its identity)
   * @param location - where it lives (a world location index)
   * @param clock - virtual time
   * @param config - service time and queue bound
   * @param Class - the class it runs
   * @param env - the bindings its instances get
   * @param observer - where its work is counted
   */
  constructor(
    readonly name: string,
    readonly location: number,
    readonly clock: VirtualClock,
    readonly config: ServerConfig,
    readonly Class: ObjectClass<T>,
    readonly env: unknown,
    readonly observer: ServerObserver
  ) {
    this.storage = new SimStorage({ armAlarm: (atMs) => this.#armAlarm(atMs) })
  }

  /** The instance now running, if any (for tests). */
  get instance(): T | undefined {
    return this.#instance
  }

  /**
   * Sends a call that reaches the object `delayMs` from now; its answer comes back as late.
   *
   * @param method - the method's name
   * @param args - its arguments (passed as they are: caller and object share one heap)
   * @param delayMs - the one-way delay from the caller
   */
  send(method: string, args: unknown[], delayMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const call: Call = {
        method,
        args,
        delayMs,
        resolve,
        reject,
        arrivedAtMs: 0,
        state: 'queued',
        readyAtMs: 0,
      }
      this.clock.after(delayMs, () => this.#arrive(call))
    })
  }

  /**
   * Drops the instance now: queued and running calls fail as on a reset, and calls arriving in
   * the next `downMs` wait until a new instance is built over the same storage.
   *
   * @param downMs - how long the object is unavailable
   */
  restart(downMs: number): void {
    const nowMs = this.clock.nowMs
    this.#generation++
    this.#upAtMs = nowMs + downMs
    this.#busyUntilMs = this.#upAtMs
    for (const call of this.#pending) {
      if (call.state === 'failed' || (call.state === 'answered' && call.readyAtMs <= nowMs))
        continue
      if (call.event) this.clock.cancel(call.event)
      if (call.internal) {
        // The alarm is stored, not in memory: it fires again once the object is back.
        this.#pending.delete(call)
        this.#armAlarm(this.#upAtMs)
      } else this.#fail(call, RESET_MESSAGE, nowMs)
    }
    this.#parked.length = 0
    this.#instance = undefined
    this.#waiting = 0
    this.#blockers = 0
  }

  #arrive(call: Call): void {
    const nowMs = this.clock.nowMs
    call.arrivedAtMs = nowMs
    if (!call.internal) {
      this.observer.arrived(this.name, nowMs)
      const fault = this.config.fault?.(call.method)
      if (this.#waiting >= this.config.queueBound || fault === 'overloaded') {
        this.observer.overloaded(this.name, nowMs)
        this.#fail(call, OVERLOADED_MESSAGE, nowMs)
        return
      }
      if (fault === 'refused') {
        this.#fail(call, RESET_MESSAGE, nowMs)
        return
      }
      if (fault === 'lost') call.lost = true
    }
    this.#waiting++
    this.#pending.add(call)
    const startMs = Math.max(nowMs, this.#busyUntilMs, this.#upAtMs)
    this.#busyUntilMs = startMs + this.config.serviceMs
    if (startMs === nowMs) this.#start(call)
    else call.event = this.clock.at(startMs, () => this.#start(call))
  }

  #start(call: Call): void {
    delete call.event
    const nowMs = this.clock.nowMs
    const doneMs = nowMs + this.config.serviceMs
    try {
      // Built by the call that needs it; what its constructor blocks waits, that call included.
      this.#instance ??= this.#build()
    } catch (error) {
      this.#waiting--
      call.state = 'running'
      this.#answer(call, { error: remote(error) }, doneMs, nowMs)
      return
    }
    if (this.#blockers > 0) {
      this.#parked.push(call)
      return
    }
    this.#waiting--
    if (!call.internal) this.observer.started(this.name, nowMs - call.arrivedAtMs, nowMs, call.args)
    call.state = 'running'
    let out: unknown
    try {
      const method = (this.#instance as Record<string, unknown>)[call.method]
      if (typeof method !== 'function') throw new TypeError(`no method ${call.method}`)
      out = method.apply(this.#instance, call.args)
    } catch (error) {
      this.#answer(call, { error: remote(error) }, doneMs, nowMs)
      return
    }
    if (out instanceof Promise)
      out.then(
        (value: unknown) => this.#answer(call, { value }, doneMs, nowMs),
        (error: unknown) => this.#answer(call, { error: remote(error) }, doneMs, nowMs)
      )
    else this.#answer(call, { value: out }, doneMs, nowMs)
  }

  #answer(
    call: Call,
    outcome: { value: unknown } | { error: unknown },
    doneMs: number,
    startedMs: number
  ): void {
    if (call.state !== 'running') return
    call.state = 'answered'
    call.readyAtMs = Math.max(doneMs, this.clock.nowMs)
    if (call.lost) {
      // It ran: whatever it changed stays changed; only its answer does not arrive.
      call.event = this.clock.at(call.readyAtMs + call.delayMs, () => {
        this.#pending.delete(call)
        call.reject(platformError(LOST_MESSAGE, { retryable: true }))
      })
      return
    }
    if ('value' in outcome) tag(outcome.value, startedMs)
    call.event = this.clock.at(call.readyAtMs + call.delayMs, () => {
      this.#pending.delete(call)
      if ('value' in outcome) call.resolve(outcome.value)
      else call.reject(outcome.error)
    })
  }

  #fail(call: Call, message: string, atMs: number): void {
    call.state = 'failed'
    const error =
      message === OVERLOADED_MESSAGE
        ? platformError(message, { overloaded: true })
        : platformError(message, { durableObjectReset: true, retryable: true })
    this.clock.at(atMs + call.delayMs, () => {
      this.#pending.delete(call)
      call.reject(error)
    })
  }

  #build(): T {
    const ctx = simState(this.name, this.storage, (until) => this.#block(until))
    return instantiate(this.Class, ctx, this.env)
  }

  /** Holds calls that start until `until` settles (`blockConcurrencyWhile`). */
  #block(until: Promise<unknown>): void {
    this.#blockers++
    const generation = this.#generation
    const release = () => {
      // A restart meanwhile dropped what this blocked.
      if (generation !== this.#generation || --this.#blockers > 0) return
      const parked = this.#parked.splice(0)
      let atMs = Math.max(
        this.clock.nowMs,
        this.#busyUntilMs - parked.length * this.config.serviceMs
      )
      for (const call of parked) {
        call.event = this.clock.at(atMs, () => this.#start(call))
        atMs += this.config.serviceMs
      }
      this.#busyUntilMs = Math.max(this.#busyUntilMs, atMs)
    }
    until.then(release, release)
  }

  #armAlarm(atMs: number | null): void {
    if (this.#alarm) this.clock.cancel(this.#alarm)
    this.#alarm = undefined
    if (atMs === null) return
    // Set by the object's clock: it goes off when that clock reads `atMs`.
    const trueAtMs = this.config.clockOf?.(this.name).trueAt(atMs) ?? atMs
    this.#alarm = this.clock.at(trueAtMs, () => {
      this.#alarm = undefined
      this.storage.alarmFired()
      const call: Call = {
        method: 'alarm',
        args: [],
        delayMs: 0,
        resolve: () => undefined,
        // An alarm that throws is retried by the platform; here it is dropped (and logged).
        reject: (error) => console.warn(`alarm of ${this.name} failed: ${String(error)}`),
        arrivedAtMs: 0,
        state: 'queued',
        readyAtMs: 0,
        internal: true,
      }
      this.#arrive(call)
    })
  }
}

/** Cloudflare's message for a queue that is too long. */
export const OVERLOADED_MESSAGE = 'Durable Object is overloaded. Too many requests queued.'
/** The runtime's message for a call whose connection was lost before its answer came. */
export const LOST_MESSAGE = 'Network connection lost.'
/** Cloudflare's message for an object reset under its callers. */
export const RESET_MESSAGE = 'Durable Object reset because its code was updated.'

function remote(error: unknown): unknown {
  if (error instanceof Error) Object.assign(error, { remote: true })
  return error
}

/**
 * Marks the decisions an object answered with when it took them: the answer itself, or the items
 * of an array. A reservation that grants units is not a decision on a request (the isolate
 * decides, when it spends them; for a request that waited for them, the isolate gives the root's
 * time as `decidedAtMs`); one that grants none carries the denial of the request that
 * waited for it, taken where it was taken (the root, or a location's object that was short),
 * and marked there first: the location's object passes the root's on as it is.
 */
function tag(value: unknown, atMs: number): void {
  if (Array.isArray(value)) for (const item of value) tag(item, atMs)
  else if (typeof value !== 'object' || value === null) return
  else if ('allowed' in value) servedAt.set(value, atMs)
  else if ('granted' in value && value.granted === 0 && 'decision' in value) {
    const decision = value.decision
    if (typeof decision === 'object' && decision !== null && !servedAt.has(decision))
      servedAt.set(decision, atMs)
  }
}
