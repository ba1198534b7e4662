/**
 * @module limiter/block-cache
 * Denials an isolate repeats itself: once a key's object denies, the isolate answers that key
 * until the object's retry time, with no call. An entry answers only what the object would
 * also deny: a request of the same or a larger cost, under the same policy, before the retry
 * time. The retry time only moves later while other isolates charge the key, and a denied
 * request changes nothing in the object (penalty locks are not extended by the requests they
 * deny), so an entry never denies what the object would allow, save after an admin reset made
 * in another isolate (bounded by `maxAgeMs`).
 */
import type { Policy } from '../../algorithms'
import type { Decision } from '../../types'

/** How many keys an isolate remembers at most (least recently used go first). */
const MAX_BLOCKED_KEYS = 10_000

/**
 * The longest an entry lives (ms), whatever the retry time: a reset in another isolate is
 * honoured here within this, and a key blocked for long costs one call per isolate per this.
 */
export const MAX_BLOCK_AGE_MS = 10_000

interface Entry {
  /** The policy the denial was decided under ({@link policyFingerprint}). */
  fingerprint: string
  /** The denied request's cost: smaller requests may still fit and are asked. */
  cost: number
  /** When a request of `cost` may pass again, by the object (this isolate's clock). */
  retryAtMs: number
  /** When the entry is dropped: `retryAtMs`, at most `maxAgeMs` after the call. */
  expiresAtMs: number
  limit: number
  remaining: number
  resetAtMs: number
}

const fingerprints = new WeakMap<Policy, string>()

/**
 * A policy's identity by value: an unchanged rule keeps its entries across a rules reload (new
 * objects, same fingerprint), a changed one does not.
 *
 * @param policy - the policy a key is charged under
 */
export function policyFingerprint(policy: Policy): string {
  let found = fingerprints.get(policy)
  if (found === undefined) {
    const fields = policy as unknown as Record<string, unknown>
    found = Object.keys(fields)
      .sort()
      .map((name) => `${name}=${String(fields[name])}`)
      .join(';')
    fingerprints.set(policy, found)
  }
  return found
}

/** One isolate's remembered denials, bounded (LRU). */
export class BlockCache {
  readonly #entries = new Map<string, Entry>()
  readonly #maxEntries: number
  readonly #maxAgeMs: number

  /**
   * @param maxEntries - keys remembered at most
   * @param maxAgeMs - the longest an entry lives
   */
  constructor(maxEntries = MAX_BLOCKED_KEYS, maxAgeMs = MAX_BLOCK_AGE_MS) {
    this.#maxEntries = maxEntries
    this.#maxAgeMs = maxAgeMs
  }

  /** Keys remembered now. */
  get size(): number {
    return this.#entries.size
  }

  /**
   * Remembers an object's denial (allowed decisions and concurrency limits are ignored).
   *
   * @param key - the object's identity
   * @param policy - the policy it was charged under
   * @param cost - the request's cost
   * @param decision - the object's decision
   * @param sentAtMs - when the call was sent: the decision was taken no earlier, so the retry
   *   time counted from here is never later than the object's
   */
  note(key: string, policy: Policy, cost: number, decision: Decision, sentAtMs: number): void {
    if (decision.allowed || policy.algorithm === 'concurrency') return
    const retryAtMs = sentAtMs + decision.retryAfterMs
    this.#entries.delete(key)
    this.#entries.set(key, {
      fingerprint: policyFingerprint(policy),
      cost,
      retryAtMs,
      expiresAtMs: Math.min(retryAtMs, sentAtMs + this.#maxAgeMs),
      limit: decision.limit,
      remaining: decision.remaining,
      resetAtMs: decision.resetAtMs,
    })
    if (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!)
    }
  }

  /**
   * The denial to answer without a call, if one applies: the same policy, a cost at least the
   * denied one, before the retry time. Times are recomputed from `nowMs`.
   *
   * @param key - the object's identity
   * @param policy - the request's policy
   * @param cost - the request's cost
   * @param nowMs - this isolate's clock
   */
  answer(key: string, policy: Policy, cost: number, nowMs: number): Decision | undefined {
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    if (nowMs >= entry.expiresAtMs || entry.fingerprint !== policyFingerprint(policy)) {
      // Expired, or the rule's policy changed: the object decides again.
      this.#entries.delete(key)
      return undefined
    }
    if (cost < entry.cost) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    return {
      allowed: false,
      limit: entry.limit,
      remaining: entry.remaining,
      resetAtMs: entry.resetAtMs,
      retryAfterMs: entry.retryAtMs - nowMs,
    }
  }

  /**
   * Forgets a key (an admin reset).
   *
   * @param key - the object's identity
   */
  drop(key: string): void {
    this.#entries.delete(key)
  }
}
