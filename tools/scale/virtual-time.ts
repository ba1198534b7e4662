/**
 * @module tools/scale/virtual-time
 * The simulator's clock and event loop. Time is whole milliseconds: Workers' `Date.now()` has
 * 1 ms resolution and is frozen while code runs, so every callback due in one millisecond sees
 * the same time. While a run lasts, `Date.now`, `setTimeout`, `clearTimeout` and
 * `scheduler.wait` are the virtual ones ({@link VirtualClock.install}), so the limiter's own
 * modules read and wait on virtual time without knowing it.
 */
import { EventHeap, type Scheduled } from './heap'

type Drain = () => Promise<void>

const host = globalThis as unknown as {
  setImmediate?: (run: () => void) => unknown
  scheduler?: { wait?: (ms: number) => Promise<void> }
  navigator?: { userAgent?: string }
}
// Kept before any run replaces the timers: a macrotask, after which every microtask queued so
// far (and every one those queued) has run. Not in workerd, where it takes a real millisecond.
const immediate =
  host.navigator?.userAgent === 'Cloudflare-Workers'
    ? undefined
    : host.setImmediate?.bind(globalThis)

/**
 * Microtask turns a drain waits in workerd. Its `setImmediate` is a 1 ms timer and a
 * `MessageChannel` message arrives within two microtask turns, so neither drains cheaply; a chain
 * of turns does, for every chain no longer than it: the limiter's longest, from one event to its
 * next call or timer, is a few dozen. A longer one would only finish one virtual millisecond late.
 */
export const MICROTASK_TURNS = 1_000

/**
 * Resolves once every pending microtask has run: what lets promise chains started at one virtual
 * instant settle before the clock moves on. `setImmediate` under Node; in workerd (the tests),
 * {@link MICROTASK_TURNS} turns of the microtask queue.
 */
export const drainMicrotasks: Drain = immediate
  ? () => new Promise((resolve) => void immediate(resolve))
  : async () => {
      for (let turn = 0; turn < MICROTASK_TURNS; turn++) await null
    }

/** Virtual time: a clock in whole ms and the callbacks due on it. */
export class VirtualClock {
  readonly #heap = new EventHeap()
  #nowMs: number
  #seq = 0

  /** @param startMs - the first instant (Unix ms) */
  constructor(startMs: number) {
    this.#nowMs = startMs
  }

  /** The current instant (Unix ms). */
  get nowMs(): number {
    return this.#nowMs
  }

  /**
   * Runs `run` at `atMs` (whole ms; never before now).
   *
   * @param atMs - when
   * @param run - what
   */
  at(atMs: number, run: () => void): Scheduled {
    const event: Scheduled = { atMs: Math.max(this.#nowMs, Math.ceil(atMs)), seq: ++this.#seq, run }
    this.#heap.push(event)
    return event
  }

  /**
   * Runs `run` `delayMs` from now.
   *
   * @param delayMs - how long from now (ms)
   * @param run - what
   */
  after(delayMs: number, run: () => void): Scheduled {
    return this.at(this.#nowMs + Math.max(0, delayMs), run)
  }

  /**
   * Cancels an event that has not run.
   *
   * @param event - from {@link at} or {@link after}
   */
  cancel(event: Scheduled): void {
    event.run = undefined
  }

  /** When the next event is due (Infinity when none is). */
  nextAtMs(): number {
    for (;;) {
      const top = this.#heap.peek()
      if (top === undefined) return Number.POSITIVE_INFINITY
      if (top.run) return top.atMs
      this.#heap.pop()
    }
  }

  /**
   * Moves the clock forward (never back).
   *
   * @param atMs - the new instant
   */
  advanceTo(atMs: number): void {
    this.#nowMs = Math.max(this.#nowMs, atMs)
  }

  /** Runs the events due now, in order, and reports whether any ran. */
  runDue(): boolean {
    let ran = false
    while (this.nextAtMs() <= this.#nowMs) {
      const event = this.#heap.pop()!
      const run = event.run!
      event.run = undefined
      run()
      ran = true
    }
    return ran
  }

  /**
   * Makes `Date.now`, `setTimeout`, `clearTimeout` and `scheduler.wait` the virtual ones.
   *
   * @returns puts the real ones back
   */
  install(): () => void {
    const g = globalThis as unknown as Record<'setTimeout' | 'clearTimeout', unknown>
    const saved = { now: Date.now, setTimeout: g.setTimeout, clearTimeout: g.clearTimeout }
    const scheduler = host.scheduler
    const wait = scheduler?.wait
    Date.now = () => this.#nowMs
    g.setTimeout = (handler: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      this.after(Number(ms) || 0, () => handler(...args))
    g.clearTimeout = (event: unknown) => {
      if (isScheduled(event)) this.cancel(event)
    }
    if (scheduler && wait) scheduler.wait = (ms) => new Promise((r) => void this.after(ms, r))
    return () => {
      Date.now = saved.now
      g.setTimeout = saved.setTimeout
      g.clearTimeout = saved.clearTimeout
      if (scheduler && wait) scheduler.wait = wait
    }
  }
}

function isScheduled(value: unknown): value is Scheduled {
  return typeof value === 'object' && value !== null && 'seq' in value && 'atMs' in value
}
