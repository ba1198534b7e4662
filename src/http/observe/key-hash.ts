/**
 * @module http/observe/key-hash
 * Limit keys as metrics, the live view, alerts and the admin API may show them: the key itself
 * when its rule's `showKeys` allows, else a keyed hash of it (HMAC-SHA-256). A key can be an API
 * key, a user id or an address: without the deployment's secret, nobody who sees a hash can find
 * its key by trying candidates (every IPv4 address is only 2^32 tries for a plain SHA-256).
 */
import type { Rule } from '../../rules'

/** Hex digits of the HMAC kept: 64 bits, plenty to tell keys apart in a dashboard. */
const HASH_HEX = 16

/** Hashes kept per isolate, so a hot key is hashed once, not per request. */
const CACHE_SIZE = 4096

/**
 * The Durable Object name whose ID keys the hash when no `KEY_HASH_SECRET` is set. No limit key
 * is spelled so: keys start with a rule id, and rule ids hold no `#`.
 */
export const KEY_HASH_OBJECT_NAME = '#key-hash'

/** The prefix of a hidden key: which hash it is. */
const HIDDEN_PREFIX = 'hmac:'

/** What names a namespace's objects (the `LIMITER` binding has it). */
interface ObjectIds {
  idFromName(name: string): { toString(): string }
}

const encoder = new TextEncoder()

/** Hashes limit keys with one secret. One per secret ({@link keyHasher}). */
export class KeyHasher {
  readonly #secret: string
  #key: Promise<CryptoKey> | undefined
  readonly #cache = new Map<string, string>()

  /** @param secret - the HMAC key, as text (imported on the first hash: most requests need none) */
  constructor(secret: string) {
    this.#secret = secret
  }

  /**
   * The first 16 hex digits of the HMAC-SHA-256 of a limit key (Analytics Engine's `index1`).
   *
   * @param key - the limit key
   */
  async hash(key: string): Promise<string> {
    const cached = this.#cache.get(key)
    if (cached !== undefined) return cached
    this.#key ??= crypto.subtle.importKey(
      'raw',
      encoder.encode(this.#secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign']
    )
    const mac = await crypto.subtle.sign('HMAC', await this.#key, encoder.encode(key))
    const hex = [...new Uint8Array(mac, 0, HASH_HEX / 2)]
      .map((byte) => byte.toString(16).padStart(2, '0'))
      .join('')
    // Bounded: when full, start afresh rather than track recency on every request.
    if (this.#cache.size >= CACHE_SIZE) this.#cache.clear()
    this.#cache.set(key, hex)
    return hex
  }

  /**
   * A limit key as `hmac:<hash>`.
   *
   * @param key - the limit key
   */
  async hidden(key: string): Promise<string> {
    return `${HIDDEN_PREFIX}${await this.hash(key)}`
  }

  /**
   * A limit key as it may be shown: itself, or `hmac:<hash>` when the rule hides its keys.
   *
   * @param rule - the key's rule (its `showKeys`)
   * @param key - the limit key
   */
  async shown(rule: Pick<Rule, 'showKeys'>, key: string): Promise<string> {
    return rule.showKeys ? key : this.hidden(key)
  }
}

let fromSecret: { secret: string; hasher: KeyHasher } | undefined
const fromNamespace = new WeakMap<ObjectIds, KeyHasher>()

/**
 * The deployment's key hasher. Its secret is `KEY_HASH_SECRET` when set; otherwise the ID of the
 * object {@link KEY_HASH_OBJECT_NAME} in the `LIMITER` namespace, which Cloudflare derives with
 * a key of the namespace: the same in every isolate and every deploy of the deployment, and not
 * computable outside the account. Made once per secret (or namespace) and kept.
 *
 * @param secret - `KEY_HASH_SECRET`, if set
 * @param namespace - the `LIMITER` binding
 */
export function keyHasher(secret: string | undefined, namespace: ObjectIds): KeyHasher {
  if (secret) {
    if (fromSecret?.secret !== secret) fromSecret = { secret, hasher: new KeyHasher(secret) }
    return fromSecret.hasher
  }
  let hasher = fromNamespace.get(namespace)
  if (!hasher) {
    hasher = new KeyHasher(namespace.idFromName(KEY_HASH_OBJECT_NAME).toString())
    fromNamespace.set(namespace, hasher)
  }
  return hasher
}
