/**
 * @module http/key-hash
 * Limit keys as metrics and alerts may show them: the key itself when its rule's `showKeys`
 * allows, else a SHA-256 prefix (a key can be an API key or a user id).
 */
import type { Rule } from '../rules'

/** Hex digits of the SHA-256 kept: 64 bits, plenty to tell keys apart in a dashboard. */
const HASH_HEX = 16

/** Hashes kept per isolate, so a hot key is hashed once, not per request. */
const CACHE_SIZE = 4096

const cache = new Map<string, string>()

/**
 * The first 16 hex digits of the SHA-256 of a limit key.
 *
 * @param key - the limit key
 */
export async function keyHash(key: string): Promise<string> {
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key))
  const hex = [...new Uint8Array(digest, 0, HASH_HEX / 2)]
    .map((byte) => byte.toString(16).padStart(2, '0'))
    .join('')
  // Bounded: when full, start afresh rather than track recency on every request.
  if (cache.size >= CACHE_SIZE) cache.clear()
  cache.set(key, hex)
  return hex
}

/**
 * A limit key as it may be shown: itself, or `sha256:<hash>` when the rule hides its keys.
 *
 * @param rule - the key's rule (its `showKeys`)
 * @param key - the limit key
 */
export async function shownKey(rule: Pick<Rule, 'showKeys'>, key: string): Promise<string> {
  return rule.showKeys ? key : hiddenKey(key)
}

/**
 * A limit key as `sha256:<hash>`.
 *
 * @param key - the limit key
 */
export async function hiddenKey(key: string): Promise<string> {
  return `sha256:${await keyHash(key)}`
}
