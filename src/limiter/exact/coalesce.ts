/**
 * @module limiter/coalesce
 * Concurrent requests for one key travel to its object as one call. While a call for a key is
 * in flight, later requests for it queue; when it settles, the queue goes as one batch, which
 * the object decides request by request, in order. A hot key then costs one round trip per
 * batch instead of one per request, and exactness is the object's, as before.
 */
import { delay } from '../calls/rpc'

/** The most requests one batch carries; more wait for the next. */
export const MAX_BATCH = 500

/**
 * The longest a batch waits for the call ahead of it (ms) before it goes anyway. Near objects
 * answer sooner, so batches form behind each call; a far object (one network hop away) would
 * otherwise make every request wait for the call ahead and then its own: two hops instead of one.
 */
export const MAX_LINGER_MS = 10

/** What a batch sends: the items still wanted, answered in the same order. */
export type SendBatch<T, R> = (items: T[]) => Promise<R[]>

/**
 * An item's answer without a call (e.g. from the block cache), or `undefined` to send it; it
 * throws when the item is no longer wanted (its caller gave up), and the item is not sent.
 */
export type Settle<R> = () => R | undefined

interface Queued<T, R> {
  item: T
  settle: Settle<R>
  resolve: (result: R) => void
  reject: (error: unknown) => void
}

interface Batch<T, R> {
  queued: Queued<T, R>[]
  /** Settles (never rejects) once the batch's call has: the next batch's gate. */
  done: Promise<void>
}

interface Lane<T, R> {
  /** The last batch started: sent, or waiting for the one before it. */
  tail: Promise<void>
  /** The batch still taking requests, if any. */
  open: Batch<T, R> | undefined
}

/**
 * The lanes of one isolate, one per object with requests in flight. A batch is sent by the
 * request that opened it, from its own request context, once the call ahead of it settled:
 * the Workers runtime ties I/O to the request that started it. So that a call that never
 * settles (its request was cancelled) cannot hold a key's lane for good, a batch waits for the
 * call ahead at most `gateWaitMs` and then goes anyway: the object's order, not the lane's, is
 * what keeps the count exact.
 */
export class Coalescer<T, R> {
  readonly #lanes = new Map<string, Lane<T, R>>()
  readonly #maxBatch: number
  readonly #wait: (ms: number) => Promise<void>

  /**
   * @param maxBatch - the most requests per call
   * @param wait - resolves after `ms` (tests pass their own)
   */
  constructor(maxBatch = MAX_BATCH, wait: (ms: number) => Promise<void> = delay) {
    this.#maxBatch = maxBatch
    this.#wait = wait
  }

  /** Objects with a call in flight or queued (for tests and stats). */
  get lanes(): number {
    return this.#lanes.size
  }

  /**
   * Whether a request for `key` now would join a batch another request opened (and so wait on
   * that request's call) rather than open one of its own.
   *
   * @param key - the object's identity
   */
  joins(key: string): boolean {
    const open = this.#lanes.get(key)?.open
    return open !== undefined && open.queued.length < this.#maxBatch
  }

  /**
   * Decides `item` in the object `key` names: in the batch now taking requests for it, or in a
   * new one sent once the call in flight (if any) settles. Before the batch goes, `settle` may
   * answer an item without a call; items it answers are not sent.
   *
   * @param key - the object's identity
   * @param item - what to send for this request
   * @param send - sends a batch (one item or more) in one call
   * @param settle - answers the item locally, or `undefined`
   * @param gateWaitMs - the longest a new batch waits for the call ahead
   */
  run(
    key: string,
    item: T,
    send: SendBatch<T, R>,
    settle: Settle<R>,
    gateWaitMs = Number.POSITIVE_INFINITY
  ): Promise<R> {
    const lane = this.#lanes.get(key)
    const { promise, resolve, reject } = Promise.withResolvers<R>()
    const queued: Queued<T, R> = { item, settle, resolve, reject }
    if (lane?.open && this.joins(key)) {
      lane.open.queued.push(queued)
      return promise
    }
    const gate = lane?.tail
    const done = Promise.withResolvers<void>()
    const batch: Batch<T, R> = { queued: [queued], done: done.promise }
    const current: Lane<T, R> = lane ?? { tail: batch.done, open: undefined }
    current.tail = batch.done
    current.open = batch
    this.#lanes.set(key, current)
    const opened =
      gate && Number.isFinite(gateWaitMs) ? Promise.race([gate, this.#wait(gateWaitMs)]) : gate
    void this.#lead(key, current, batch, opened, send).finally(done.resolve)
    return promise
  }

  async #lead(
    key: string,
    lane: Lane<T, R>,
    batch: Batch<T, R>,
    gate: Promise<void> | undefined,
    send: SendBatch<T, R>
  ): Promise<void> {
    // Requests arriving while the call ahead is in flight join this batch.
    if (gate) await gate
    if (lane.open === batch) lane.open = undefined
    const sending: Queued<T, R>[] = []
    for (const queued of batch.queued) {
      try {
        const answer = queued.settle()
        if (answer === undefined) sending.push(queued)
        else queued.resolve(answer)
      } catch (error) {
        queued.reject(error)
      }
    }
    try {
      if (sending.length === 0) return
      const results = await send(sending.map(({ item }) => item))
      sending.forEach((queued, i) => queued.resolve(results[i]!))
    } catch (error) {
      for (const queued of sending) queued.reject(error)
    } finally {
      if (this.#lanes.get(key) === lane && lane.tail === batch.done) this.#lanes.delete(key)
    }
  }
}
