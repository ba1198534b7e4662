/**
 * @module limiter/hand-back
 * A lease book's units on their way back to its lessors, and the background calls that carry
 * them (and its refills): kept alive past the request, and waited for when the book flushes.
 */
import { heldNow, type KeyLease } from './key-lease'
import type { Upstream } from './lease-calls'

/** A key's lease with the lessor its units go back to. */
export interface ReturnableLease extends KeyLease {
  to: Upstream
}

/** A book's hand-backs and background calls. */
export class HandBack {
  readonly #background = new Set<Promise<unknown>>()
  readonly #keepAlive: (promise: Promise<unknown>) => void
  readonly #lapsedGatherMs: number
  /** Keys with lapsed units to hand back when the gathering ends. */
  readonly #lapsedDue = new Set<ReturnableLease>()

  /**
   * @param keepAlive - keeps a background call running past the request
   * @param lapsedGatherMs - how long lapsed units are gathered before they go back (ms; 0: at once)
   */
  constructor(keepAlive: (promise: Promise<unknown>) => void, lapsedGatherMs: number) {
    this.#keepAlive = keepAlive
    this.#lapsedGatherMs = lapsedGatherMs
  }

  /**
   * Runs a call in the background: kept alive, and waited for by {@link settled}.
   *
   * @param promise - the call
   */
  run(promise: Promise<unknown>): void {
    this.#background.add(promise)
    void promise.finally(() => this.#background.delete(promise))
    this.#keepAlive(promise)
  }

  /**
   * Hands the lease's units back while they can still be spent, and its lapsed ones.
   *
   * @param lease - the key's lease (emptied)
   * @param nowMs - the time
   */
  all(lease: ReturnableLease, nowMs: number): void {
    heldNow(lease, nowMs)
    const lots = [...lease.lots, ...(lease.lapsed ?? [])]
    lease.lots = []
    lease.lapsed = undefined
    this.#lapsedDue.delete(lease)
    const to = lease.to
    for (const lot of lots) if (lot.units > 0) this.run(to.refund(lease, lease.policy, lot))
  }

  /**
   * Hands the lease's lapsed units back: now, or once the gathering ends.
   *
   * @param lease - the key's lease
   */
  lapsed(lease: ReturnableLease): void {
    if (this.#lapsedGatherMs <= 0) return this.#sendLapsed(lease)
    if (this.#lapsedDue.size === 0)
      setTimeout(() => {
        const due = [...this.#lapsedDue]
        this.#lapsedDue.clear()
        for (const each of due) this.#sendLapsed(each)
      }, this.#lapsedGatherMs)
    this.#lapsedDue.add(lease)
  }

  /**
   * Forgets the lease's gathering: its lapsed units went with an ask.
   *
   * @param lease - the key's lease
   */
  sentWithAsk(lease: ReturnableLease): void {
    this.#lapsedDue.delete(lease)
  }

  /** Waits for every background call started so far. */
  async settled(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background])
  }

  #sendLapsed(lease: ReturnableLease): void {
    const lapsed = lease.lapsed ?? []
    lease.lapsed = undefined
    for (const lot of lapsed) this.run(lease.to.refund(lease, lease.policy, lot))
  }
}
